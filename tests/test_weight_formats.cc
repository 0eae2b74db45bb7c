// Weight and KV-cache formats: read from the config's quantization_config, from --quantization and
// --kv-cache-dtype, priced in bytes moved, memory fit and compute rate.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "scenario/hardware.h"
#include "scenario/memory_fit.h"
#include "scenario/model_spec.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {
ModelSpec zoo(const std::string& name) { return model_from_config(models_path(name + "/config.json"), "test"); }

json with_quant(json q) {
  json cfg = json::parse(slurp(models_path("qwen3-30b-a3b/config.json")));
  cfg["quantization_config"] = std::move(q);
  return cfg;
}
}  // namespace

TEST_CASE("4-bit formats move their bits plus their scales") {
  CHECK(dtype_bytes(DType::INT4) == Approx(0.5625));    // int4 + bf16 scale per 32
  CHECK(dtype_bytes(DType::NVFP4) == Approx(0.5625));   // e2m1 + fp8 scale per 16
  CHECK(dtype_bytes(DType::MXFP4) == Approx(0.53125));  // e2m1 + e8m0 scale per 32
  CHECK(parse_dtype("w4a16", "x") == DType::INT4);
  CHECK(kv_cache_bytes("fp8_e4m3", "x") == 1.0);
  CHECK(kv_cache_bytes("auto", "x") == 2.0);
  CHECK_THROWS_WITH(kv_cache_bytes("fp4_e2m1", "--kv-cache-dtype"), Catch::Contains("not modelled"));
}

TEST_CASE("quantization_config: Kimi-K2-Thinking's int4 experts, gpt-oss-style mxfp4, modelopt nvfp4") {
  const ModelSpec k = zoo("kimi-k2-thinking");
  CHECK(k.expert_weight_dtype == DType::INT4);
  CHECK(k.weight_dtype == DType::BF16);  // attention and shared experts are in `ignore`
  CHECK(zoo("kimi-k2").experts_dtype() == DType::FP8);
  CHECK_FALSE(zoo("kimi-k2").expert_weight_dtype);
  const ModelSpec mx = model_from_json(
      with_quant({{"quant_method", "mxfp4"}, {"modules_to_not_convert", {"model.layers.*.self_attn", "lm_head"}}}), "",
      "t");
  CHECK(mx.expert_weight_dtype == DType::MXFP4);
  CHECK(mx.weight_dtype == DType::BF16);
  const ModelSpec nv = model_from_json(with_quant({{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}}), "", "t");
  CHECK(nv.weight_dtype == DType::NVFP4);
  CHECK(nv.experts_dtype() == DType::NVFP4);
  CHECK_THROWS_WITH(model_from_json(with_quant({{"quant_method", "awq"}}), "", "t"), Catch::Contains("not modelled"));
}

TEST_CASE("the fp4 peak where the GPU has one; W4A16 at the 16-bit rate") {
  const Hardware b200 = load_hardware("b200:nvswitch", 8);
  const Hardware h100 = load_hardware("h100-sxm:nvswitch", 8);
  CHECK(b200.gpu.peak_tflops(DType::NVFP4) == Approx(b200.gpu.peak_fp4_tflops));
  CHECK(b200.gpu.peak_tflops(DType::NVFP4) > b200.gpu.peak_tflops(DType::FP8));
  CHECK(h100.gpu.peak_tflops(DType::MXFP4) == Approx(h100.gpu.peak_bf16_tflops));
  CHECK(b200.gpu.peak_tflops(DType::INT4) == Approx(b200.gpu.peak_bf16_tflops));
}

TEST_CASE("Kimi-K2 on 8x RTX PRO 6000: fp8 does not fit, the int4 checkpoint does") {
  const CliResult fp8 = run_specsim({"run", "--accept-len", "2.5", "--model-path", "kimi-k2", "--hardware",
                                     "rtx-pro-6000:pcie-numa", "--tp-size", "8"});
  CHECK(fp8.exit_code == 2);
  CHECK(fp8.err.find("a 4-bit checkpoint") != std::string::npos);
  const CliResult int4 = run_specsim({"run", "--accept-len", "2.5", "--model-path", "kimi-k2-thinking", "--hardware",
                                      "rtx-pro-6000:pcie-numa", "--tp-size", "8", "--allreduce", "sglang"});
  INFO(int4.err);
  REQUIRE(int4.exit_code == 0);
  CHECK(int4.out.find("compressed-tensors int4 (routed experts") != std::string::npos);
  CHECK(int4.out.find("falls back to NCCL") != std::string::npos);  // SGLang's gate on 8 PCIe GPUs
}

TEST_CASE("--kv-cache-dtype fp8 halves the KV cache; --quantization is checked against the checkpoint") {
  const Hardware hw = load_hardware("h100-sxm:nvswitch", 8);
  const ModelSpec m = zoo("llama-3.1-8b");
  RunSpec run;
  run.tp_size = 1, run.algo = SpecAlgo::None, run.context_len = 32768;
  const MemoryFit bf16 = memory_fit(m, nullptr, hw, run, std::nullopt);
  run.kv_cache_bytes = 1.0;
  const MemoryFit fp8 = memory_fit(m, nullptr, hw, run, std::nullopt);
  CHECK(fp8.kv_gib == Approx(bf16.kv_gib / 2));
  CHECK(fp8.weights_gib == Approx(bf16.weights_gib));

  const std::vector<std::string> base{
      "run", "--model-path", "llama-3.1-8b", "--hardware", "h100-sxm:nvswitch", "--speculative-algorithm", "NONE"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_specsim(a);
  };
  const CliResult kv = with({"--kv-cache-dtype", "fp8_e4m3"});
  INFO(kv.err);
  REQUIRE(kv.exit_code == 0);
  CHECK(kv.out.find("kv cache fp8_e4m3") != std::string::npos);
  const CliResult online = with({"--quantization", "fp8"});
  REQUIRE(online.exit_code == 0);
  CHECK(online.out.find("weights fp8") != std::string::npos);
  const CliResult nvfp4 = with({"--quantization", "modelopt_fp4"});
  CHECK(nvfp4.exit_code == 2);
  CHECK(nvfp4.err.find("(--quantization)") != std::string::npos);
  const CliResult mismatch = run_specsim({"run", "--accept-len", "2.5", "--model-path", "deepseek-v3", "--hardware",
                                          "h100-sxm:nvswitch", "--tp-size", "8", "--quantization", "mxfp4"});
  CHECK(mismatch.exit_code == 2);
  CHECK(mismatch.err.find("differs from the config's") != std::string::npos);
  const CliResult gptq = with({"--quantization", "gptq"});
  CHECK(gptq.exit_code == 2);
  CHECK(gptq.err.find("not modelled: --quantization gptq") != std::string::npos);
}
