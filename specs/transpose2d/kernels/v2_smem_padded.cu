// transpose2d v2: native CUDA C++, a TILE x TILE tile staged in shared memory, padded against
// bank conflicts.
//
// Block (TILE, ROWS) owns the tile x[r0 : r0 + TILE, c0 : c0 + TILE]. Phase 1: each warp reads
// one row segment of the tile -- TILE consecutive elements, coalesced -- and writes it to a row
// of the shared tile. Phase 2, after one barrier: each warp reads a column of the shared tile and
// writes it as a row segment of y[c0 + k, r0 : r0 + TILE], coalesced. The column read is where
// bank conflicts happen: with a row stride of TILE elements, 32 lanes reading one column hit the
// same bank (a 32-way conflict for float32). The rows are padded to TILE + PAD elements with PAD
// chosen so the stride is an odd number of 32-bit words (PAD = 1 for 4-byte types, 2 for 2-byte
// ones), which puts the 32 lanes on 32 different banks. Global traffic is the compulsory
// 2 * M * N * itemsize bytes, every access coalesced; values are copied as they are (bit-exact).
//
// Compiled at run time by NVRTC. KS_T is the element type, defined by the harness; TILE (32 or
// 64) and ROWS (rows of threads per block; each thread copies TILE / ROWS elements per phase)
// are tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS
#define ROWS 8
#endif

// padding (elements) that makes the shared row stride an odd number of 32-bit words
constexpr int PAD = sizeof(KS_T) >= 4 ? 1 : (int)(4 / sizeof(KS_T));

// x: (M, N) contiguous; y: (N, M) contiguous. grid: (cdiv(N, TILE), cdiv(M, TILE)); block: (TILE, ROWS).
extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose_smem(const KS_T* __restrict__ x, KS_T* __restrict__ y, int M, int N) {
    __shared__ KS_T tile[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long r0 = (long long)blockIdx.y * TILE;  // first row of x in this tile
    const long long c0 = (long long)blockIdx.x * TILE;  // first column of x in this tile
#pragma unroll
    for (int k = ty; k < TILE; k += ROWS) {
        const long long r = r0 + k, c = c0 + tx;
        if (r < M && c < N) tile[k][tx] = x[r * N + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = ty; k < TILE; k += ROWS) {
        const long long c = c0 + k, r = r0 + tx;  // y[c, r] = x[r, c]
        if (c < N && r < M) y[c * M + r] = tile[tx][k];
    }
}
