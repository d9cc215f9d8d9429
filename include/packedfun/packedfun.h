// The packedfun C++ API: include this one header.
#ifndef PACKEDFUN_PACKEDFUN_H_
#define PACKEDFUN_PACKEDFUN_H_

#include <packedfun/c_api.h>
#include <packedfun/object.h>
#include <packedfun/error.h>
#include <packedfun/string.h>
#include <packedfun/bytes.h>
#include <packedfun/any.h>
#include <packedfun/function.h>
#include <packedfun/registry.h>
#include <packedfun/module.h>
#include <packedfun/tensor.h>

#endif  // PACKEDFUN_PACKEDFUN_H_
