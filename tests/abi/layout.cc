// Compile-only ABI layout test, C++17 flavour: the very same assertions as layout.c.
#include "layout.c"
