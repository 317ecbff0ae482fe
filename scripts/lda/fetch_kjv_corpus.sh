#!/usr/bin/env bash
# Fetches a corpus of longer documents for the LDA quality bench and writes it as plain text, one document per line,
# for `bfly-lda --text FILE`: the King James Bible from the Debian packages `bible-kjv-text` (the compressed text)
# and `bible-kjv` (the `bible` program that decodes it), one document per chapter (1,189 chapters, about 670
# words each before stop words). The packages are downloaded with `apt-get download` and unpacked into a temporary
# directory (no installation, no root needed).
#
# usage: scripts/lda/fetch_kjv_corpus.sh [OUTPUT_FILE]
#   default OUTPUT_FILE: ${XDG_CACHE_HOME:-~/.cache}/bfly/corpora/kjv-chapters.txt
# Prints the output path last.
set -euo pipefail

out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/bfly/corpora/kjv-chapters.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download bible-kjv bible-kjv-text > /dev/null 2>&1) || {
  echo "fetch_kjv_corpus: apt-get download bible-kjv bible-kjv-text failed (run apt-get update first?)" >&2
  exit 1
}
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
# `bible` prints "Book N" before each chapter, then numbered verses wrapped over lines: join a chapter into one line.
"$work/root/usr/bin/bible" -p "$work/root/usr/lib/" "Gen1:1-Rev22:21" |
  awk '/^[1-3]? ?[A-Z][A-Za-z ]+ [0-9]+$/ { if (doc != "") print doc; doc = ""; next }
       { gsub(/^ +[0-9]+ /, ""); if ($0 != "") doc = doc " " $0 }
       END { if (doc != "") print doc }' > "$tmp"
lines=$(wc -l < "$tmp")
[[ $lines -eq 1189 ]] || { echo "fetch_kjv_corpus: expected 1189 chapters, got $lines" >&2; rm -f "$tmp"; exit 1; }
mv "$tmp" "$out"
echo "$out"
