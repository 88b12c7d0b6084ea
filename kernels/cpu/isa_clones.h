// BATON_ISA_CLONES: a function compiled for AVX-512, AVX2 and baseline x86-64 (GCC's target_clones: the
// loader picks one clone per function, by the processor), with its whole body inlined into each clone
// (flatten), so its loops vectorise as wide as the processor allows while the binary runs on any x86-64.
#pragma once

// GCC only: Clang 14 accepts target_clones but emits one baseline function (and refuses flatten
// beside it), so a Clang build (the ASan build) runs these loops as baseline x86-64 code. Sanitizer
// builds too: the clones' resolvers run while the program is loaded, before a sanitizer's runtime.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define BATON_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), flatten))
#define BATON_HAVE_ISA_CLONES 1
#else
#define BATON_ISA_CLONES
#define BATON_HAVE_ISA_CLONES 0
#endif
