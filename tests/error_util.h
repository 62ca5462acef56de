#pragma once

// Catching the input errors that bad scenes and arguments must raise (io, physics tests).

#include <gtest/gtest.h>

#include <exception>

#include "slender/core/error.h"

namespace slender::test {

/// runs f, which must throw InputError, and returns the error (a failure when it does not)
template <class F>
InputError catch_input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return InputError("", -1, "", "");
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return InputError("", -1, "", "");
}

}  // namespace slender::test
