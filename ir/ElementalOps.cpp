// Which ops are computed element by element (ElementalOps.h).
#include "ir/ElementalOps.h"

namespace shardc {

bool isElementalOp(OpKind kind) {
  if (kind == OpKind::AllSlice)
    return true; // this device's block, read at an offset (ElementalShape.cpp)
  switch (opInfo(kind).group) {
  case OpGroup::Unary:
  case OpGroup::Convert:
  case OpGroup::Binary:
  case OpGroup::Reduction:
  case OpGroup::Shape:
  case OpGroup::Creation:
    return true;
  default:
    return false;
  }
}

} // namespace shardc
