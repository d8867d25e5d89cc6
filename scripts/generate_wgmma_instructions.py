#!/usr/bin/env python3
"""Writes src/spamm/wgmma_instructions.hpp: the wgmma.mma_async shapes the Hopper SpAMM kernel
issues. Inline PTX must name every accumulator register, so each shape is spelled out."""
import pathlib

TYPES = [("wgmma_f16", "f16.f16", 16, True), ("wgmma_bf16", "bf16.bf16", 16, True),
         ("wgmma_tf32", "tf32.tf32", 8, False)]
WIDTHS = (64, 128, 192, 256)

HEADER = """#pragma once
// wgmma.mma_async instructions (sm_90a) with A and B from shared memory through matrix
// descriptors, both K-major, and float accumulators: m64nNk16 for fp16 and bf16, m64nNk8 for
// tf32, for N = 64, 128, 192 and 256. Inline PTX must name each accumulator register, so every
// shape is written out; scripts/generate_wgmma_instructions.py writes this file.
//
// wgmma_op<Type, N>::run(d, a, b): d += A (64 x k) * B (k x N), d the N / 2 accumulators of
// this thread in the layout of the PTX ISA (n8 block j: rows g and g + 8, columns 8j + 2t and
// 8j + 2t + 1, g = lane / 4, t = lane % 4, in the rows of this warp within the warpgroup).
// Outside an sm_90a compilation the bodies are empty; the kernel never runs there.
// clang-format off

#include <cstdint>

namespace nearsparse::spamm::detail {

struct wgmma_f16 {};
struct wgmma_bf16 {};
struct wgmma_tf32 {};

template <class Type, int N>
struct wgmma_op;
"""


def shape(tname, ptx, k, trans, n):
    r = n // 2
    out = ["", "template <>", f"struct wgmma_op<{tname}, {n}> {{",
           "  __device__ __forceinline__ static void run(float* d, std::uint64_t a, std::uint64_t b) {",
           "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)", "    asm volatile(",
           '        "{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\n"',
           f'        "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptx} "']
    regs = [f"%{i}" for i in range(r)]
    for i in range(0, r, 16):
        pre = "{" if i == 0 else ""
        post = "}, " if i + 16 >= r else ", "
        out.append(f'        "{pre}{", ".join(regs[i:i + 16])}{post}"')
    tail = "1, 1, 0, 0" if trans else "1, 1"
    out.append(f'        "%{r}, %{r + 1}, p, {tail};\\n}}\\n"')
    ops = [f'"+f"(d[{i}])' for i in range(r)]
    for i in range(0, r, 8):
        lead = "        : " if i == 0 else "          "
        out.append(lead + ", ".join(ops[i:i + 8]) + ("," if i + 8 < r else ""))
    out += ['        : "l"(a), "l"(b));', "#else", "    (void)d, (void)a, (void)b;", "#endif",
            "  }", "};"]
    return out


def main():
    lines = HEADER.rstrip("\n").split("\n")
    for t in TYPES:
        for n in WIDTHS:
            lines += shape(*t, n)
    lines += ["", "}  // namespace nearsparse::spamm::detail", "// clang-format on", ""]
    target = pathlib.Path(__file__).resolve().parent.parent / "src/spamm/wgmma_instructions.hpp"
    target.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
