// Python bindings (pybind11): the scene loader, the single and batched simulators, numpy arrays.
// Observations of a batch are written into arrays the simulator keeps (one per kind), and the
// methods return numpy views of them: no copy per call, and numpy's __dlpack__ hands them to
// torch.from_dlpack without a copy either. A view stays valid until the same observation is
// asked for again (then it holds the new values). The module registers its topics here, each in
// its own file: the model and the loaders (bind_model.cpp), gradients through time
// (bind_rollout.cpp), one simulation (bind_simulator.cpp), batches and their live views
// (bind_batch.cpp), the controllers (control_bindings.cpp); what they share is in
// bindings_common.h.

#include "python/bindings_common.h"

using namespace slender;
namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "Slender: discrete elastic rods and shells (native core)";
  // errors: InputError (bad scene or argument) -> ValueError, MemoryLimitError (a request
  // refused before it is allocated) -> MemoryError, others -> RuntimeError
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const MemoryLimitError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, without_check_text(e.what()).c_str());
    }
  });

  python::bind_control(m);
  python::bind_model(m);
  python::bind_rollout(m);
  python::bind_simulator(m);
  python::bind_batch(m);
}
