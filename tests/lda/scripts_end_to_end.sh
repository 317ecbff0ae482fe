#!/usr/bin/env bash
# The LDA scripts with the real bfly-lda: make_topic_corpus.py -> bfly-lda -> check_recovery.py, and a small
# make_paper_corpus.py corpus read and trained for one iteration. usage: PYTHON BFLY_LDA SCRIPTS_DIR WORK_DIR
set -euo pipefail
python=$1 lda=$2 scripts=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$python" "$scripts/make_topic_corpus.py" --out "$work/topics"
"$lda" --docword "$work/topics/docword.topics.txt" --vocab "$work/topics/vocab.topics.txt" --topics 6 \
  --alpha 0.3 --beta 0.05 --iterations 150 --quiet --show-topics 0 --out "$work/run"
"$python" "$scripts/check_recovery.py" --truth "$work/topics/true_phi.tsv" --phi "$work/run/phi.bin"
"$python" "$scripts/make_paper_corpus.py" --out "$work/paper" --docs 300 --vocab 2000 --tokens 21000
"$lda" --docword "$work/paper/docword.paper.txt" --vocab "$work/paper/vocab.paper.txt" --topics 16 \
  --iterations 1 --quiet --show-topics 0 | grep -q "300 documents, 2000 words, 21000 tokens, longest document 307"
