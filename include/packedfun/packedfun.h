// The packedfun C++ API: include this one header.
#ifndef PACKEDFUN_PACKEDFUN_H_
#define PACKEDFUN_PACKEDFUN_H_

#include <packedfun/c_api.h>
#include <packedfun/object.h>
#include <packedfun/error.h>
#include <packedfun/string.h>
#include <packedfun/bytes.h>
#include <packedfun/any.h>
#include <packedfun/optional.h>
#include <packedfun/function.h>
#include <packedfun/registry.h>
#include <packedfun/module.h>
#include <packedfun/tensor.h>
#include <packedfun/object_type.h>
#include <packedfun/reflection.h>
#include <packedfun/array.h>
#include <packedfun/list.h>
#include <packedfun/map.h>
#include <packedfun/dict.h>
#include <packedfun/shape.h>
#include <packedfun/enum.h>
#include <packedfun/env.h>
#include <packedfun/tuple.h>
#include <packedfun/variant.h>
#include <packedfun/expected.h>
#include <packedfun/typed_function.h>

#endif  // PACKEDFUN_PACKEDFUN_H_
