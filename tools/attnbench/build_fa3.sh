#!/bin/bash
# Builds FlashAttention-3's forward kernels (bf16, paged KV, split, varlen) into an importable
# package, for tools/attnbench/fa3_kernels.py: head dim 128 (what SGLang's FA3 backend calls for
# Llama- and Qwen-class models) and MLA's absorbed shape, a 64-wide rope QK part with a 512-wide
# latent V and `qv` (DeepSeek's and Kimi's), paged by a page table only (SGLang's calls). Nothing
# of it is committed.
#
#   tools/attnbench/build_fa3.sh FLASH_ATTENTION_DIR CUTLASS_INCLUDE_DIR OUT_DIR [objects|package|all]
#
# FLASH_ATTENTION_DIR: a checkout of github.com/Dao-AILab/flash-attention (its hopper/ folder);
# CUTLASS_INCLUDE_DIR: the include/ folder of the CUTLASS commit its csrc/cutlass submodule pins.
# `objects` compiles the CUDA files (nvcc only, no GPU or PyTorch needed: about 12 minutes on 2
# cores); `package` compiles FA3's PyTorch binding against the local PyTorch and links it
# (needs objects); `all` (the default) does both. Then: PYTHONPATH=OUT_DIR/pkg.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 FLASH_ATTENTION_DIR CUTLASS_INCLUDE_DIR OUT_DIR [objects|package|all]" >&2
  exit 2
fi
FA=$1/hopper; CUTLASS=$2; OUT=$3; STEP=${4:-all}
case $STEP in objects|package|all) ;; *) echo "error: step must be objects, package or all, not '$STEP'" >&2; exit 2;; esac
[ -f "$FA/flash_api_stable.cpp" ] || { echo "error: $1 has no hopper/flash_api_stable.cpp: give a flash-attention checkout" >&2; exit 2; }
[ -f "$CUTLASS/cutlass/numeric_types.h" ] || { echo "error: $2 has no cutlass/numeric_types.h: give CUTLASS's include/ folder" >&2; exit 2; }
NVCC=${NVCC:-nvcc}
command -v "$NVCC" > /dev/null || { echo "error: no $NVCC on PATH: install the CUDA toolkit or set NVCC" >&2; exit 2; }
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v "$NVCC")")")}
# Only what the calls need: no backward, fp16/fp8, head dims 96/192/256, softcap, local window,
# appended KV or clusters. Head dim 64 stays on for MLA's 64 x 512 kernels.
DISABLED="BACKWARD APPENDKV LOCAL SOFTCAP FP16 FP8 CLUSTER HDIM96 HDIM192 HDIM256 SM8x"
FEAT=""
for f in $DISABLED; do FEAT="$FEAT -DFLASHATTENTION_DISABLE_$f"; done
FEAT="$FEAT -DFLASH_ATTENTION_DISABLE_HDIMDIFF192"
SRCS="instantiations/flash_fwd_hdim128_bf16_paged_split_sm90.cu instantiations/flash_fwd_hdim128_bf16_paged_sm90.cu
      instantiations/flash_fwd_hdim128_bf16_split_sm90.cu instantiations/flash_fwd_hdim128_bf16_sm90.cu
      instantiations/flash_fwd_hdim128_bf16_packgqa_sm90.cu
      instantiations/flash_fwd_hdim64_512_bf16_paged_split_sm90.cu instantiations/flash_fwd_hdim64_512_bf16_paged_sm90.cu
      flash_fwd_combine.cu flash_prepare_scheduler.cu"
# FA3's dispatch names a kernel for every head-dim pair at every (split, paged, pack-GQA)
# combination it switches over; head dim 64 brings 64 x 64, 64 x 256 and 64 x 512. The ones no
# call here reaches (64 x 64, 64 x 256, and 64 x 512 without a page table) are linked as stubs
# that stop with an error instead of being compiled.
UNBUILT=""
for combo in false,false,false,false false,false,false,true true,false,false,true false,true,false,true \
             true,true,false,true; do
  UNBUILT="$UNBUILT 64,64,$combo 64,256,$combo"
done
for combo in false,false,false,false false,false,false,true true,false,false,true; do
  UNBUILT="$UNBUILT 64,512,$combo"
done
mkdir -p "$OUT/obj" "$OUT/pkg/flash_attn_3"

# One object a source, named after it.
object_of() { echo "$OUT/obj/$(basename "$1" .cu).o"; }

if [ "$STEP" != package ]; then
  export CPLUS_INCLUDE_PATH="$CUDA_HOME/include/cccl${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
  FLAGS=(-Xcompiler -fPIC -O3 -std=c++17 --use_fast_math --expt-relaxed-constexpr
         -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -DCUTLASS_ENABLE_GDC_FOR_SM90 -DCUTLASS_DEBUG_TRACE_LEVEL=0 -DNDEBUG
         -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__
         -D__CUDA_NO_HALF2_OPERATORS__ -gencode arch=compute_90a,code=sm_90a $FEAT -I"$FA" -I"$CUTLASS")
  pids=()
  for s in $SRCS; do
    # at most JOBS compiles at once
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-$(nproc)}" ]; do wait -n || true; done
    "$NVCC" -c "$FA/$s" -o "$(object_of "$s")" "${FLAGS[@]}" &
    pids+=($!)
  done
  failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  [ $failed = 0 ] || { echo "error: nvcc failed on FA3's sources (above)" >&2; exit 1; }
fi

if [ "$STEP" != objects ]; then
  for s in $SRCS; do
    [ -f "$(object_of "$s")" ] || { echo "error: $(object_of "$s") is missing: run the objects step first" >&2; exit 2; }
  done
  PY=${PYTHON:-python3}
  $PY -c "import torch.utils.cpp_extension" 2> /dev/null ||
    { echo "error: $PY cannot import torch: the package step builds FA3's PyTorch binding" >&2; exit 2; }
  TI=$($PY -c "from torch.utils.cpp_extension import include_paths; print(' '.join('-I' + p for p in include_paths()))")
  PI=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
  TL=$($PY -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
  g++ -O3 -std=c++17 -fPIC -w $FEAT -DPy_LIMITED_API=0x03090000 -DTORCH_TARGET_VERSION=0x0209000000000000 \
    -I"$FA" -I"$CUTLASS" $TI -I"$PI" -I"$CUDA_HOME/include" -I"$CUDA_HOME/include/cccl" \
    -c "$FA/flash_api_stable.cpp" -o "$OUT/obj/flash_api_stable.o"
  # the stubs (above): the template arguments after <Arch, T> are head dim, V head dim, Split,
  # PagedKVNonTMA, Has_softcap, PackGQA, as FA3's instantiation files give them
  {
    echo '#include <cstdio>'
    echo '#include <cstdlib>'
    echo '#include <cutlass/numeric_types.h>'
    echo '#include "flash.h"'
    for u in $UNBUILT; do
      echo "template <> void run_mha_fwd_<90, cutlass::bfloat16_t, $u>(Flash_fwd_params &, cudaStream_t) {"
      echo "  std::fprintf(stderr, \"error: FA3 kernel <$u> is not built by build_fa3.sh\\n\");"
      echo "  std::abort();"
      echo "}"
    done
  } > "$OUT/obj/fa3_unbuilt.cpp"
  g++ -O2 -std=c++17 -fPIC -w -I"$FA" -I"$CUTLASS" -I"$CUDA_HOME/include" -c "$OUT/obj/fa3_unbuilt.cpp" \
    -o "$OUT/obj/fa3_unbuilt.o"
  OBJS=("$OUT/obj/flash_api_stable.o" "$OUT/obj/fa3_unbuilt.o")
  for s in $SRCS; do OBJS+=("$(object_of "$s")"); done
  g++ -shared "${OBJS[@]}" -o "$OUT/pkg/flash_attn_3/_C.abi3.so" -L"$TL" -lc10 -ltorch -ltorch_cpu -ltorch_cuda \
    -lc10_cuda -L"$CUDA_HOME/lib64" -lcudart -Wl,-rpath,"$TL" -Wl,-rpath,"$CUDA_HOME/lib64"
  cp "$FA/flash_attn_3/__init__.py" "$OUT/pkg/flash_attn_3/"
  cp "$FA/flash_attn_interface.py" "$OUT/pkg/"
  # The interface reads which head dims were built from this module (setup.py writes it).
  {
    echo "_DISABLED = {$(for f in $DISABLED; do printf '"FLASHATTENTION_DISABLE_%s", ' "$f"; done)"
    echo "             \"FLASH_ATTENTION_DISABLE_HDIMDIFF192\"}"
    echo "_BUILT = {\"FLASHATTENTION_DISABLE_SPLIT\", \"FLASHATTENTION_DISABLE_PAGEDKV\", \"FLASHATTENTION_DISABLE_PACKGQA\","
    echo "          \"FLASHATTENTION_DISABLE_VARLEN\", \"FLASHATTENTION_DISABLE_HDIM128\", \"FLASHATTENTION_DISABLE_HDIM64\","
    echo "          \"FLASH_ATTENTION_DISABLE_HDIMDIFF64\"}"
    echo "CONFIG = {\"build_flags\": {k: k in _DISABLED for k in _DISABLED | _BUILT}}"
  } > "$OUT/pkg/flash_attn_config.py"
  # What was built, for fa3_kernels.py's header: the sources' commits where each is the top of its
  # own git checkout (not a folder inside another repository's).
  commit_of() {
    local top
    top=$(git -C "$1" rev-parse --show-toplevel 2> /dev/null) && [ "$top" = "$(cd "$1" && pwd -P)" ] &&
      git -C "$1" rev-parse HEAD || echo unknown
  }
  FA_COMMIT=$(commit_of "$1")
  CUTLASS_COMMIT=$(commit_of "$CUTLASS/..")
  echo "BUILD = {\"flash_attention\": \"$FA_COMMIT\", \"cutlass\": \"$CUTLASS_COMMIT\", \"nvcc\": \"$("$NVCC" --version | tail -1)\"}" \
    > "$OUT/pkg/fa3_build_info.py"
  echo "built: PYTHONPATH=$OUT/pkg"
fi
