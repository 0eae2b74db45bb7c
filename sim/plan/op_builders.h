#pragma once
// Small constructors that fill an Op's FLOPs and bytes from its shape. Activations are bf16.
#include "plan/op.h"

namespace specsim::ops {

constexpr double kActBytes = 2.0;  // bf16 activations, as SGLang runs them

/// [t, k] x [k, n] with weights of `w`.
inline Op gemm(const char* name, double t, double n, double k, DType w, bool replicated = false) {
  Op o;
  o.name = name;
  o.kind = OpKind::Gemm;
  o.dtype = w;
  o.replicated = replicated;
  o.m = t, o.n = n, o.k = k;
  o.flops = 2.0 * t * n * k;
  o.bytes = n * k * dtype_bytes(w) + t * (k + n) * kActBytes;
  return o;
}

/// `batch` independent [t, k] x [k, n] products (per-head BMM).
inline Op bmm(const char* name, double t, double n, double k, double batch, DType w) {
  Op o = gemm(name, t, n, k, w);
  o.batch = batch;
  o.flops *= batch;
  o.bytes *= batch;
  return o;
}

/// Grouped expert GEMM: `pairs` token-expert pairs over `experts` distinct [k, n] weights.
inline Op moe_gemm(const char* name, double pairs, double experts, double n, double k, DType w) {
  Op o;
  o.name = name;
  o.kind = OpKind::MoeGemm;
  o.dtype = w;
  o.m = pairs, o.n = n, o.k = k;
  o.experts = experts;
  o.flops = 2.0 * pairs * n * k;
  o.bytes = experts * n * k * dtype_bytes(w) + pairs * (k + n) * kActBytes;
  return o;
}

/// A memory-bound small kernel moving `bytes`.
inline Op small(const char* name, OpKind kind, double bytes, double flops = 0) {
  Op o;
  o.name = name;
  o.kind = kind;
  o.bytes = bytes;
  o.flops = flops;
  return o;
}

/// Attention over the KV cache: `kv_bytes` read for the batch, `flops` of QK^T and PV.
inline Op attention(const char* name, double t, double heads, double kv_bytes, double flops) {
  Op o;
  o.name = name;
  o.kind = OpKind::Attention;
  o.m = t;
  o.batch = heads;
  o.bytes = kv_bytes;
  o.flops = flops;
  return o;
}

inline Op all_reduce(const char* name, double bytes, int group = 0) {
  Op o;
  o.name = name;
  o.kind = OpKind::AllReduce;
  o.comm_bytes = bytes;
  o.group = group;
  return o;
}

inline Op all_gather(const char* name, double bytes, int group = 0) {
  Op o;
  o.name = name;
  o.kind = OpKind::AllGather;
  o.comm_bytes = bytes;
  o.group = group;
  return o;
}

/// Each rank's input of `bytes` summed over `group` ranks, each keeping 1/group of it.
inline Op reduce_scatter(const char* name, double bytes, int group = 0) {
  Op o = all_gather(name, bytes, group);
  o.kind = OpKind::ReduceScatter;
  return o;
}

/// MoE dispatch (or combine): `bytes` sent by this rank to the ranks holding its tokens' experts.
inline Op all_to_all(const char* name, double bytes, bool combine, int group = 0) {
  Op o = all_gather(name, bytes, group);
  o.kind = OpKind::AllToAll;
  o.combine = combine;
  return o;
}

}  // namespace specsim::ops
