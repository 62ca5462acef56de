// The CUDA backend on demand: the first call that needs it loads libslender_cuda.so (see
// engine/cuda_module.h) and every later one uses it; a CPU run never loads it, so it maps no
// CUDA library. The module is looked for, in order, at $SLENDER_CUDA_MODULE, next to the
// library holding this code (libslender_host.so, beside the programs and the Python module), and
// by the dynamic loader's own search. In a build without CUDA, or where the module cannot be
// loaded, there are no devices and asking for the backend is an error that says why.

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "slender/backend.h"
#include "slender/config.h"
#include "slender/core/error.h"
#include "slender/engine/cuda_module.h"

namespace slender {

namespace {

struct Loaded {
  const CudaModule* api = nullptr;
  std::string why;  // when api is null
};

#ifdef SLENDER_WITH_CUDA
// the folder of the shared object that holds this function
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}
#endif

Loaded load() {
#ifndef SLENDER_WITH_CUDA
  return Loaded{nullptr, "Slender was built without CUDA; reconfigure with -DSLENDER_WITH_CUDA=ON"};
#else
  std::string tried;
  auto attempt = [&](const std::string& path) -> const CudaModule* {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      tried += "\n  " + path + ": " + (e ? e : "not loadable");
      return nullptr;
    }
    auto entry = reinterpret_cast<CudaModuleEntry>(dlsym(h, kCudaModuleEntryName));
    const CudaModule* api = entry ? entry() : nullptr;
    if (!api || api->version != kCudaModuleVersion || api->layout != cuda_module_layout()) {
      tried += "\n  " + path + ": not a CUDA module of this Slender build";
      dlclose(h);
      return nullptr;
    }
    return api;  // kept loaded for the process's lifetime
  };
  const char* env = std::getenv("SLENDER_CUDA_MODULE");
  if (env && *env) {
    if (const CudaModule* api = attempt(env)) return Loaded{api, ""};
  }
  const std::string folder = own_folder();
  if (!folder.empty()) {
    if (const CudaModule* api = attempt(folder + kCudaModuleFileName)) return Loaded{api, ""};
  }
  if (const CudaModule* api = attempt(kCudaModuleFileName)) return Loaded{api, ""};
  return Loaded{nullptr, "its module " + std::string(kCudaModuleFileName) +
                             " could not be loaded (set SLENDER_CUDA_MODULE to its path):" + tried};
#endif
}

std::atomic<bool> g_loaded{false};

const Loaded& module() {
  static const Loaded loaded = [] {  // once, thread-safe
    Loaded l = load();
    g_loaded = l.api != nullptr;
    return l;
  }();
  return loaded;
}

}  // namespace

bool built_with_cuda() {
#ifdef SLENDER_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_module_loaded() { return g_loaded; }

int cuda_device_count() {
  const Loaded& m = module();
  return m.api ? m.api->device_count() : 0;
}

int cuda_device_of(const void* p) {
  const Loaded& m = module();
  return m.api ? m.api->device_of(p) : 0;
}

void require_cuda_backend() {
  const Loaded& m = module();
  if (!m.api) throw Error("the CUDA backend was asked for, but " + m.why);
  if (m.api->device_count() == 0) {
    throw Error(
        "the CUDA backend was asked for, but no CUDA device is visible on this machine; "
        "run with --backend cpu (or \"backend\": \"cpu\" in the scene)");
  }
}

void cuda_device_memory(std::size_t& free_bytes, std::size_t& total_bytes) {
  require_cuda_backend();
  module().api->device_memory(&free_bytes, &total_bytes);
}

std::unique_ptr<SimulatorEngine> make_cuda_simulator_engine(std::shared_ptr<const Model> model,
                                                            const IntegratorSpec& spec,
                                                            LinearSolverKind solver) {
  require_cuda_backend();
  return module().api->make_simulator_engine(std::move(model), spec, solver);
}

std::unique_ptr<RolloutAdjointEngine> make_cuda_rollout_adjoint(std::shared_ptr<const Model> model,
                                                                const IntegratorSpec& spec,
                                                                const RolloutOptions& options) {
  require_cuda_backend();
  return module().api->make_rollout_adjoint(std::move(model), spec, options);
}

std::unique_ptr<BatchedSimulatorEngine> make_cuda_batched_engine(std::shared_ptr<const Model> model,
                                                                 int nenv,
                                                                 const IntegratorSpec& spec,
                                                                 const State& initial,
                                                                 LinearSolverKind solver) {
  require_cuda_backend();
  return module().api->make_batched_engine(std::move(model), nenv, spec, initial, solver);
}

}  // namespace slender
