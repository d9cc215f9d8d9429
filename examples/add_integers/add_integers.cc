// The classic PackedFunc example library: AddIntegers and Greet, registered and exported.
#include <packedfun/packedfun.h>

#include <cstdint>
#include <string>

namespace {

int64_t AddIntegers(int64_t a, int64_t b) { return a + b; }

std::string Greet(const packedfun::String& name) { return "Hello, " + name.str() + "!"; }

}  // namespace

// Loading the library registers both names in the global registry (the classic PackedFunc flow) ...
PACKEDFUN_REGISTER_GLOBAL("AddIntegers").set_body_typed(AddIntegers).describe("Adds two integers.");
PACKEDFUN_REGISTER_GLOBAL("Greet").set_body_typed(Greet).describe("Returns 'Hello, <name>!'.");

// ... and exports them as C symbols, so load_module(path).add_integers works without the registry.
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_integers, AddIntegers);
PACKEDFUN_DLL_EXPORT_DOC(add_integers, "Adds two integers.");
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(greet, Greet);
PACKEDFUN_DLL_EXPORT_DOC(greet, "Returns 'Hello, <name>!'.");
