// PFAny entry points of c_api.h: turning borrowed views into owned values, releasing values.
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/string.h"
#include "runtime/tensor.h"

// Resolved against tensor.cc in the same library; weak so the runtime links while it is absent.
#pragma weak PFTensorFromDLPack

namespace packedfun {
namespace detail {
namespace {

/*! Metadata copies for a Tensor that borrows the data of a DLTensor* argument. */
struct BorrowedTensorHolder {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void DeleteBorrowedHolder(DLManagedTensor* managed) {
  delete static_cast<BorrowedTensorHolder*>(managed->manager_ctx);
}

PFObject* TensorFromBorrowed(const DLTensor* src) {
  if (src == nullptr) Throw("ValueError", "cannot own a NULL DLTensor*");
  if (&PFTensorFromDLPack == nullptr) {
    Throw("ValueError", "this runtime cannot turn a borrowed DLTensor* into a Tensor");
  }
  auto holder = std::make_unique<BorrowedTensorHolder>();
  int ndim = src->ndim > 0 ? src->ndim : 0;
  holder->shape.assign(src->shape, src->shape + ndim);
  if (src->strides != nullptr) holder->strides.assign(src->strides, src->strides + ndim);
  holder->managed.dl_tensor = *src;
  holder->managed.dl_tensor.shape = ndim > 0 ? holder->shape.data() : nullptr;
  holder->managed.dl_tensor.strides =
      src->strides != nullptr && ndim > 0 ? holder->strides.data() : nullptr;
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = &DeleteBorrowedHolder;
  PFObject* out = nullptr;
  // PFTensorFromDLPack owns the managed tensor from here on, on success and failure alike.
  BorrowedTensorHolder* raw = holder.release();
  CheckCall(PFTensorFromDLPack(&raw->managed, &out));
  return out;
}

}  // namespace

void ViewToOwned(const PFAny& view, PFAny* out) {
  std::string_view text;
  switch (view.type_index) {
    case kPFTypeRawStr:
    case kPFTypeStrView:
      AnyToStringView(view, false, &text);
      *out = MakeStringAny(text);
      return;
    case kPFTypeBytesView:
      AnyToStringView(view, true, &text);
      *out = MakeBytesAny(text);
      return;
    case kPFTypeDLTensorPtr:
      if (view.zero_padding == PACKEDFUN_DLTENSOR_ARG_TAG && view.v_ptr != nullptr) {
        *out = ObjectAny(TensorFromArg(*static_cast<const PFDLTensorArg*>(view.v_ptr)));
        return;
      }
      *out = ObjectAny(TensorFromBorrowed(static_cast<const DLTensor*>(view.v_ptr)));
      return;
    case kPFTypeContainerView: {
      const auto* cv = static_cast<const PFContainerView*>(view.v_ptr);
      PFAny made{};
      CheckCall(cv->vtable->materialize(cv, &made));
      *out = made;
      return;
    }
    default:
      if (IsObjectIndex(view.type_index)) IncRef(view.v_obj);
      *out = view;
      return;
  }
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFAnyViewToOwned(const PFAny* view, PFAny* out) {
  if (!IsObjectIndex(view->type_index) && view->type_index < kPFTypeDLTensorPtr) {
    *out = *view;  // plain POD: the common case, no guard needed
    return 0;
  }
  return Guard([&] {
    ViewToOwned(*view, out);
    return 0;
  });
}

PACKEDFUN_API void PFAnyRelease(PFAny* value) { ReleaseAny(value); }

}  // extern "C"
