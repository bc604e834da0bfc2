// C++17 consumer of an installed ffijit: the header-only C++ API over the installed runtime.
#include <cstdio>

#include "ffijit/ffijit.h"

int main() {
  ffijit::Function add =
      ffijit::Function::FromTyped([](int64_t a, int64_t b) { return a + b; }, "consumer.add");
  ffijit::SetGlobalFunction("consumer.add", add);
  int64_t sum = ffijit::GetGlobalFunctionOrThrow("consumer.add")(40, 2).cast<int64_t>();
  try {
    add(1, "two");
    return 1;
  } catch (const ffijit::Error& e) {
    std::printf("consumer (C++): add(40, 2) = %lld; add(1, \"two\") raised %s\n",
                static_cast<long long>(sum), e.kind().c_str());
  }
  // Modules from the installed runtime: the system library is always there.
  if (ffijit::Module::SystemLib().kind() != "library") return 3;
  return sum == 42 ? 0 : 2;
}
