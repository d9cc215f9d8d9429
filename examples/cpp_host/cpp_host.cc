// A C++ host program: loads examples/add_one's library with packedfun::Module and calls
// add_one_cpu on tensors it allocates. No Python anywhere.
#include <packedfun/packedfun.h>

#include <iostream>
#include <string>

namespace pf = packedfun;

namespace {

/*! "[1, 2, 3]" for a 1-d float32 tensor. */
std::string Format(const pf::Tensor& t) {
  std::string out = "[";
  const float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.size(0); ++i) {
    out += (i ? ", " : "") + std::to_string(static_cast<int>(p[i * t.stride(0)]));
  }
  return out + "]";
}

int Run(const std::string& library) {
  pf::Module mod = pf::Module::LoadFromFile(library);
  pf::Function add_one = mod.GetFunctionRequired("add_one_cpu");
  std::cout << "loaded " << mod.path() << "\n";
  std::cout << "doc: " << mod.GetFunctionDoc("add_one_cpu").value_or("(none)") << "\n";

  pf::Tensor x = pf::Tensor::Empty({5}, pf::kFloat32);
  pf::Tensor y = pf::Tensor::Empty({5}, pf::kFloat32);
  for (int64_t i = 0; i < x.size(0); ++i) x.data_ptr<float>()[i] = static_cast<float>(i);
  add_one(x, y);
  std::cout << "x: " << x.dtype() << " on " << x.device() << ", shape (" << x.size(0) << ")\n";
  std::cout << "add_one_cpu(" << Format(x) << ") -> " << Format(y) << "\n";

  // The kernel's checks come back as packedfun::Error with their kind and message.
  pf::Tensor wrong = pf::Tensor::Empty({5}, pf::kFloat64);
  try {
    add_one(wrong, y);
  } catch (const pf::Error& e) {
    std::cout << "add_one_cpu(float64 tensor) raised " << e.kind() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " path/to/libadd_one.so\n";
    return 2;
  }
  try {
    return Run(argv[1]);
  } catch (const pf::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
