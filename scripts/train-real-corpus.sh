#!/usr/bin/env bash
# The README's first command, the main job: installs the packages, builds bfly-lda, fetches the real corpus (the
# 117,659 glosses of WordNet 3.0, Debian package wordnet-base) and trains an LDA topic model on it, then prints
# the topics and where the outputs went.
#
# With a GPU: the whole corpus, K = 64, 300 iterations (a fraction of a second on an H100).
# Without one: the generated z-step kernel runs on the CPU (bfly/lockstep.hpp), which is about 0.3 M tokens/s on
# 2 cores, so the run takes the first 20,000 glosses for 100 iterations (under a minute on 2 cores).
#
# usage: scripts/train-real-corpus.sh
#   TOPICS=64 GPU_ITERATIONS=1000 CPU_DOCS=20000 CPU_ITERATIONS=100 RUN_DIR=runs/wordnet   (the defaults; set any of
#   them in the environment to change it)
set -euo pipefail
cd "$(dirname "$0")/.."

topics=${TOPICS:-64}
gpu_iterations=${GPU_ITERATIONS:-1000}
cpu_docs=${CPU_DOCS:-20000}
cpu_iterations=${CPU_ITERATIONS:-100}
out=${RUN_DIR:-runs/wordnet}

scripts/install-packages.sh
source scripts/cuda-env.sh
cmake -S . -B build -G Ninja
cmake --build build --target bfly-lda
lda=build/tools/bfly-lda/bfly-lda

corpus=$(scripts/lda/fetch_real_corpus.sh)

device=$("$lda" --check-device)
echo
if [[ $device == gpu:* ]]; then
  echo "== training on all WordNet glosses on the GPU: K = $topics, $gpu_iterations iterations"
  subset=()
  iterations=$gpu_iterations
  progress_every=50
else
  echo "== ${device#cpu: }"
  echo "== so the generated z-step kernel runs on the CPU (bfly/lockstep.hpp executes the CUDA source the GPU"
  echo "== would compile, about 0.3 M tokens/s on 2 cores): training on a SUBSET, the first $cpu_docs of the"
  echo "== $(wc -l < "$corpus") glosses, K = $topics, $cpu_iterations iterations. A GPU trains on all of them."
  subset=(--max-docs "$cpu_docs")
  iterations=$cpu_iterations
  progress_every=10
fi
echo

start=$SECONDS
"$lda" --text "$corpus" "${subset[@]}" --topics "$topics" --iterations "$iterations" \
  --progress-every "$progress_every" --show-topics "$topics" --out "$out"
echo
echo "bfly-lda finished in $((SECONDS - start)) s (reading the corpus, training and writing the outputs)."
echo "outputs in $out/:"
echo "  topics.txt    the top words of every topic, with its share of the tokens"
echo "  theta.bin     documents x topics, p(topic | document); row r is the document on line r of documents.txt"
echo "  phi.bin       words x topics, p(word | topic); row w is the word on line w of vocab.txt"
echo "  loglik.csv    log-likelihood per token after every iteration, with the training seconds"
echo "  checkpoint.bin, to continue the run: $lda --text $corpus ${subset[*]} --iterations N --resume $out"
