#!/usr/bin/env bash
# Fetches the real corpus of the LDA runs and converts it to plain text, one document per line, for
# `bfly-lda --text FILE`.
#
# Corpus: the glosses of WordNet 3.0 (Debian package `wordnet-base`, /usr/share/wordnet/data.{noun,verb,adj,adv}),
# one document per synset: its definition and usage examples. 117,659 documents; with bfly-lda's defaults
# (stop words, words of 2+ letters seen 2+ times) 117,468 non-empty documents, 33,882 words, 830,889 tokens.
#
# usage: scripts/lda/fetch_real_corpus.sh [OUTPUT_FILE]
#   default OUTPUT_FILE: ${XDG_CACHE_HOME:-~/.cache}/bfly/corpora/wordnet-glosses.txt
# Installs wordnet-base with apt-get when it is missing (as root, or through sudo). Prints the output path last.
set -euo pipefail

out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/bfly/corpora/wordnet-glosses.txt}
wordnet=/usr/share/wordnet

if [[ ! -f $wordnet/data.noun ]]; then
  echo "fetch_real_corpus: $wordnet/data.noun is missing; installing the Debian package wordnet-base" >&2
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo > /dev/null; then
    sudo=(sudo)
  else
    echo "fetch_real_corpus: not root and no sudo; run: apt-get install -y wordnet-base" >&2
    exit 1
  fi
  if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y wordnet-base > /dev/null; then
    "${sudo[@]}" apt-get update > /dev/null
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y wordnet-base > /dev/null
  fi
fi

mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# Each data line is `offset lex_filenum ss_type w_cnt word ... | gloss`; the license header lines start with
# two spaces. Keep the gloss (after the first " | "), without trailing blanks.
for part in noun verb adj adv; do
  awk '!/^  / { i = index($0, " | "); if (i > 0) { g = substr($0, i + 3); sub(/[ \t]+$/, "", g); print g } }' \
    "$wordnet/data.$part"
done > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "fetch_real_corpus: $(wc -l < "$out") documents (WordNet glosses) in $out" >&2
echo "$out"
