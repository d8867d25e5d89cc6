#include "commands.hpp"

namespace nearsparse::app {

const char* const common_options =
    "  --backend NAME   execution space: serial, openmp or cuda (default: the build's default)\n"
    "  --help           this text\n"
    "  --kokkos-...     Kokkos' own options, e.g. --kokkos-threads=4 (3.x) or\n"
    "                   --kokkos-num-threads=4 (4.x), --kokkos-device-id=1\n";

const char* const function_options_text =
    "  --n N            matrix size (default 1000); with --model 3d the nearest cube side^3\n"
    "  --model M        1d (dimerized chain; overlap exp(-alpha|i-j|)) or 3d (cubic lattice with\n"
    "                   staggered on-site energies; its 3-D overlap) (default 1d)\n"
    "  --precision P    fp64, fp32, tf32, fp16 or bf16 (default fp32)\n"
    "  --error E        relative Frobenius error target of the result (default 1e-4; at least\n"
    "                   the precision's floor: fp64 1e-10, fp32 1e-5, tf32/fp16 2e-3, bf16 2e-2)\n"
    "  --tile L         tile edge: 32, 64 or 128 (default 64)\n"
    "  --max-iterations K  most steps (default 100)\n"
    "  --kernel K       automatic (default), portable or specialized SpAMM kernels\n"
    "  --csv FILE       error bound, residual and valid ratio per product as CSV\n"
    "  --svg FILE       the same as an SVG chart\n"
    "  --check-max N    check against the dense LAPACK eigendecomposition up to this N\n"
    "                   (default 2000; a failed check or a missed target exits with 1)\n";

// With --storage block-sparse, sp2, invsqrt and sign run on block-sparse storage instead, and
// take these options (the model options --delta, --disorder, --seed, --alpha, --mu as well).
const char* const block_sparse_function_text =
    "\n  --storage S      dense (default: the options above) or block-sparse: only the kept\n"
    "                   tiles are stored, so N can exceed what dense storage holds; then:\n"
    "  --matrix FILE    the input from a real symmetric Matrix Market file (.mtx or .mtx.gz)\n"
    "                   instead of the model\n"
    "  --n N, --model M the model as above (N up to 2^31 - 257)\n"
    "  --precision P    fp64 (default) or fp32\n"
    "  --tile L         tile edge: 8, 16, 32 (default), 64 or 128\n"
    "  --tau T          drop tile products with norm product < T (default 1e-12)\n"
    "  --drop D         drop tiles below D times their matrix's Frobenius norm (default 1e-12)\n"
    "  --tolerance R    stop at this residual per sqrt(N) (sp2: per sqrt(occupied)) (default\n"
    "                   1e-8 fp64, 1e-4 fp32)\n"
    "  --kernel K       the tile products: automatic (default; the host BLAS or the CUDA\n"
    "                   kernel), portable or specialized\n"
    "  --occupied K     sp2: occupied states (default N/2)\n"
    "  --cutoff C       invsqrt: overlap entries below C are not stored (default 1e-12)\n"
    "  --output FILE    write the result as a coordinate Matrix Market file\n"
    "  --csv FILE, --svg FILE  the steps (tiles, kept products, error bound, residual)\n"
    "  --check-max N    check against the dense LAPACK eigendecomposition up to this N\n"
    "                   (default 2000)\n"
    "  --check-tolerance E  relative Frobenius error the check accepts (default 1e-6 fp64,\n"
    "                   1e-3 fp32)\n";

const std::vector<command>& commands() {
  static const std::vector<command> list{
      {"info", "versions, Kokkos configuration, backends and devices",
       "  --detailed       add Kokkos' full configuration report\n", run_info, true},
      {"spamm", "sparse approximate product of a decay matrix: time, valid ratio, error",
       "  --n N            matrix size (default 1024)\n"
       "  --precision P    fp64, fp32, tf32, fp16 or bf16 (default fp32)\n"
       "  --tile L         tile edge: 32, 64 or 128 (default 64)\n"
       "  --valid-ratio V  keep this fraction of tile products; tau is searched (default 0.1)\n"
       "  --tau T          use this threshold instead of a valid ratio\n"
       "  --error E        tau: the largest whose error bound is at most E ||A||_F ||B||_F;\n"
       "                   prints the bound and the measured error, and checks them\n"
       "  --matrix M       algebraic (a_ij = 0.1/(|i-j|^0.1+1), default) or exponential\n"
       "                   (a_ij = 0.99^|i-j|)\n"
       "  --stride S       load-balance stride (default 1)\n"
       "  --kernel K       automatic (the CUDA kernels on CUDA, the host BLAS path on OpenMP and\n"
       "                   Serial), portable, or specialized (those; an error where there is "
       "none)\n"
       "  --no-wgmma       on compute capability 9.0, keep the mma.sync kernels (no wgmma)\n"
       "  --host-grouping G  host path: automatic (default), merged (kept products merged\n"
       "                   into large gemms) or per_tile (one work item per C tile)\n"
       "  --sweep          also sweep the valid ratio from 100 % to 1 % and write CSV and SVG\n"
       "  --csv FILE       the sweep's CSV (default spamm_sweep.csv; implies --sweep)\n"
       "  --plot FILE      the sweep's SVG chart (default spamm_sweep.svg; implies --sweep)\n"
       "  --a FILE         A from a Matrix Market file (.mtx or .mtx.gz; any field but complex)\n"
       "                   instead of the decay matrix; --n and --matrix are then unused\n"
       "  --b FILE         B from a file (default: B = A); A's columns must equal B's rows\n"
       "  --output FILE    write C as a Matrix Market array file (.gz: compressed)\n",
       run_spamm, true},
      {"diag", "banded (CDM) and structured-sparse (HM) products: time, baseline, check",
       "  --n N            size of the banded matrices (default 10240)\n"
       "  --half-band W    diagonals on each side of the main one (default 10)\n"
       "  --structured-n N size of the structured-sparse matrices (default 4000)\n"
       "  --dg-a D         randomly placed diagonals of A (default 29)\n"
       "  --dg-b D         randomly placed diagonals of B (default 35)\n"
       "  --op-a OP        none or transpose: multiply by A^T (default none)\n"
       "  --op-b OP        none or transpose (default none)\n"
       "  --algorithm A    HM kernel: output_stationary (default) or atomic\n"
       "  --kernel K       automatic (default), portable, or specialized (CUDA's band tiles and\n"
       "                   fused kernel, the host kernels on OpenMP and Serial; an error where\n"
       "                   there is none)\n"
       "  --seed S         random seed of the matrices (default 2024)\n"
       "  --check-rows R   rows of C checked against a host computation (default 64)\n"
       "  --a FILE         multiply A from a Matrix Market file (.mtx or .mtx.gz), stored in HM\n"
       "                   form (its entries' diagonals), instead of the random matrices\n"
       "  --b FILE         B from a file (default: B = A)\n"
       "  --output FILE    write C (with --a, or the structured-sparse C) as Matrix Market\n",
       run_diag, true},
      {"kpm", "density of states of a topological insulator by the Kernel Polynomial Method",
       "  --nx, --ny, --nz N   sites in x, y (periodic) and z (open) (default 40 x 40 x 10)\n"
       "  --t T                hopping (default 1)\n"
       "  --disorder W         on-site energies uniform in [-W/2, W/2] (default 0)\n"
       "  --dot-potential V    quantum-dot potential (default 0.1; 0: no dots)\n"
       "  --dot-period P       dot superlattice period in sites (default 10)\n"
       "  --dot-radius R       dot radius in sites (default 3)\n"
       "  --dot-layers L       top layers holding dots (default 0: all)\n"
       "  --moments M          Chebyshev moments (default 512)\n"
       "  --vectors R          random start vectors (default 16)\n"
       "  --algorithm A        naive, aug_spmv or aug_spmmv (default aug_spmmv)\n"
       "  --format F           crs or sell (default crs)\n"
       "  --chunk C, --sigma S SELL-C-sigma parameters (default 32, 1)\n"
       "  --bounds B           lanczos or gershgorin (default lanczos)\n"
       "  --margin E           spectrum mapped onto [-(1-E), 1-E] (default 0.01)\n"
       "  --damping D          jackson, lorentz or none (default jackson)\n"
       "  --kernel K           automatic (default; the CUDA kernel on CUDA, the vectorized host\n"
       "                       kernel on OpenMP and Serial), portable, or specialized (those; an\n"
       "                       error where there is none)\n"
       "  --lambda L           Lorentz kernel parameter (default 4)\n"
       "  --points K           energies of the density of states (default 2 M)\n"
       "  --seed S             start vectors and disorder (default 1)\n"
       "  --csv FILE           density of states as CSV (default kpm_dos.csv; '' for none)\n"
       "  --plot FILE          density of states as SVG (default kpm_dos.svg; '' for none)\n"
       "  --split              rows split between Cuda and OpenMP in one run\n"
       "  --weight W           fraction of rows on Cuda with --split (default: measured)\n"
       "  --matrix FILE        the Hamiltonian from a Matrix Market file (.mtx or .mtx.gz): real\n"
       "                       symmetric or complex Hermitian (by its banner or its entries)\n"
       "                       instead of the topological insulator\n",
       run_kpm, true},
      {"tlr", "tile low-rank compression and TLR-GEMM (dense and TLR C) against the dense product",
       "  --n N                matrix size (default 2048)\n"
       "  --tile NB            tile edge (default 256)\n"
       "  --matrix M           hilbert (default) or covariance (exponential kernel on random\n"
       "                       points in the unit square or cube; diagonal tiles stay dense)\n"
       "  --dimension D        covariance points in 2 or 3 dimensions (default 2)\n"
       "  --length L           covariance correlation length (default 0.1)\n"
       "  --rank R             largest rank of a tile (default 32)\n"
       "  --accuracy E         compression: |A - A_tlr|_F <= E |A|_F (default 1e-8)\n"
       "  --method M           randomized (default) or svd (exact, for small tiles)\n"
       "  --dense-diagonal     keep the diagonal tiles dense (always for covariance)\n"
       "  --product-accuracy E recompression accuracy of the TLR-C product (default 1e-10)\n"
       "  --kernel K           dense-C product: automatic (default; cuBLAS on CUDA, OpenBLAS on\n"
       "                       OpenMP and Serial), portable, or specialized (those; an error\n"
       "                       where there is none)\n"
       "  --csv FILE           the rank of every tile of A and C (default tlr_ranks.csv; '' for\n"
       "                       none)\n"
       "  --a FILE             compress A from a real Matrix Market file (.mtx or .mtx.gz)\n"
       "                       instead of the generated matrix; --n and --matrix are unused\n"
       "  --b FILE             B from a file (default: B = A)\n"
       "  --output FILE        write the dense C of the GEMM-LLD product as Matrix Market\n",
       run_tlr, true},
      {"sp2", "density matrix of a gapped tight-binding model by SP2 purification with SpAMM",
       std::string(function_options_text) +
           "  --delta D        staggered on-site energy +-D (default 0.5)\n"
           "  --disorder W     on-site disorder uniform in [-W/2, W/2] (default 0)\n"
           "  --seed S         disorder seed (default 1)\n" +
           block_sparse_function_text,
       run_sp2, false},
      {"invsqrt", "S^(-1/2) of a decaying overlap matrix by Newton-Schulz with SpAMM",
       std::string(function_options_text) +
           "  --alpha A        overlap decay S_ij = exp(-A |i-j|) (default 0.5)\n" +
           block_sparse_function_text,
       run_invsqrt, false},
      {"sign", "sign(H - mu I) of a gapped tight-binding model by Newton-Schulz with SpAMM",
       std::string(function_options_text) +
           "  --delta D        staggered on-site energy +-D (default 0.5)\n"
           "  --disorder W     on-site disorder uniform in [-W/2, W/2] (default 0)\n"
           "  --seed S         disorder seed (default 1)\n"
           "  --mu M           shift (default 0, the middle of the gap)\n" +
           block_sparse_function_text,
       run_sign, false},
  };
  return list;
}

}  // namespace nearsparse::app
