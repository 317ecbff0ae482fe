// The multi-GPU bench's corpus generator (synthetic_words.cu), run on the current device.
#pragma once

// words[t] for every token t of documents 0 .. docs - 1 of a shard whose document 0 is document first_doc of the
// whole corpus (doc_offsets: docs + 1 device values, whole-corpus token indices); a token's word depends only on
// (seed, its document's and its own whole-corpus index), so every sharding makes the same corpus. Synchronizes;
// throws std::runtime_error on a CUDA error.
void make_synthetic_words(const long long* doc_offsets, long long docs, long long first_doc, int* words, int vocab,
                          unsigned long long seed);
