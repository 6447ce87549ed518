// Every attribute of the op set (../shared/LANGUAGE.md section 5), named once
// with its type: passes, the interpreter and the backend read an attribute
// through its key, `op.get(attrs::perm)`, never by spelling its name, so a
// misspelt name does not compile and the type is decoded in one place
// (decodeAttribute in IR.cpp). An attribute with the same spelling on
// different ops but another type (pad's `low` is a list, random_uniform's a
// number) has one key per meaning.
#pragma once

#include "ir/Sharding.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc {

struct DenseLiteral;

/// The name of an attribute whose value has type T.
template <class T> struct AttrKey { const char *name; };

namespace attrs {

using Ints = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// ---- reductions and shape ops ----------------------------------------------------
inline constexpr AttrKey<Ints> dims{"dims"};          ///< reduce_*: reduced; broadcast: target dims
inline constexpr AttrKey<bool> keepDims{"keep_dims"}; ///< reduce_*
inline constexpr AttrKey<Ints> perm{"perm"};          ///< transpose
inline constexpr AttrKey<int64_t> dim{
    "dim"}; ///< concat, iota, all_gather, reduce_scatter, all_slice
inline constexpr AttrKey<Ints> start{"start"};      ///< slice
inline constexpr AttrKey<Ints> limit{"limit"};      ///< slice
inline constexpr AttrKey<Ints> stride{"stride"};    ///< slice (default 1 per dim)
inline constexpr AttrKey<Ints> padLow{"low"};       ///< pad: elements before each dim
inline constexpr AttrKey<Ints> padHigh{"high"};     ///< pad: elements after each dim
inline constexpr AttrKey<double> padValue{"value"}; ///< pad: the fill (default 0)

// ---- contractions and creation ----------------------------------------------------
inline constexpr AttrKey<std::string> equation{"equation"}; ///< einsum
inline constexpr AttrKey<DenseLiteral> dense{"value"};      ///< constant
inline constexpr AttrKey<int64_t> seed{"seed"};             ///< random_uniform, random_normal
inline constexpr AttrKey<double> uniformLow{"low"};         ///< random_uniform (default 0)
inline constexpr AttrKey<double> uniformHigh{"high"};       ///< random_uniform (default 1)
inline constexpr AttrKey<double> mean{"mean"};              ///< random_normal (default 0)
inline constexpr AttrKey<double> stddev{"stddev"};          ///< random_normal (default 1)

// ---- sharding ops and manual_computation --------------------------------------------
inline constexpr AttrKey<Sharding> sharding{"sharding"}; ///< sharding_constraint, reshard
inline constexpr AttrKey<std::vector<Sharding>> inShardings{"in_shardings"};
inline constexpr AttrKey<std::vector<Sharding>> outShardings{"out_shardings"};
inline constexpr AttrKey<std::vector<AxisRef>> manualAxes{"manual_axes"};

// ---- collectives -----------------------------------------------------------------------
inline constexpr AttrKey<std::vector<AxisRef>> axes{"axes"}; ///< every collective but the two below
inline constexpr AttrKey<std::string> kind{"kind"};          ///< all_reduce: sum, max or min
inline constexpr AttrKey<int64_t> splitDim{"split_dim"};     ///< all_to_all
inline constexpr AttrKey<int64_t> concatDim{"concat_dim"};   ///< all_to_all
inline constexpr AttrKey<Pairs> pairs{"pairs"};     ///< collective_permute: [source, target]
inline constexpr AttrKey<std::string> axis{"axis"}; ///< axis_index

// ---- control flow ----------------------------------------------------------------------
inline constexpr AttrKey<int64_t> lower{"lower"};       ///< for: first value of the index
inline constexpr AttrKey<int64_t> upper{"upper"};       ///< for: the index stays below it
inline constexpr AttrKey<int64_t> loopStep{"step"};     ///< for: increment (> 0, default 1)
inline constexpr AttrKey<std::string> callee{"callee"}; ///< call: the function, without '@'

} // namespace attrs
} // namespace shardc
