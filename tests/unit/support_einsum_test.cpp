// Unit tests for the shared einsum parser (support/Einsum.h): terms, their
// offsets in the text, the combined label order and both errors.
#include "support/Einsum.h"

#include <catch2/catch.hpp>

using namespace shardc::support;

TEST_CASE("support einsum: terms and offsets", "[support][einsum]") {
  EinsumParse p = parseEinsum("bij,bjk->bik");
  REQUIRE(p.ok());
  REQUIRE(p.equation.inputs.size() == 2);
  CHECK(p.equation.inputs[0].labels == "bij");
  CHECK(p.equation.inputs[0].offset == 0);
  CHECK(p.equation.inputs[1].labels == "bjk");
  CHECK(p.equation.inputs[1].offset == 4);
  CHECK(p.equation.output.labels == "bik");
  CHECK(p.equation.output.offset == 9);
  CHECK(p.message("bij,bjk->bik") == "");

  // Spaces anywhere; an offset is the term's first letter.
  EinsumParse spaced = parseEinsum(" ij , jk -> ik ");
  REQUIRE(spaced.ok());
  CHECK(spaced.equation.inputs[0].offset == 1);
  CHECK(spaced.equation.inputs[1].labels == "jk");
  CHECK(spaced.equation.inputs[1].offset == 6);
  CHECK(spaced.equation.output.offset == 12);

  // Empty terms: a scalar operand, a full reduction.
  EinsumParse empty = parseEinsum(",ij->");
  REQUIRE(empty.ok());
  REQUIRE(empty.equation.inputs.size() == 2);
  CHECK(empty.equation.inputs[0].labels.empty());
  CHECK(empty.equation.inputs[1].offset == 1);
  CHECK(empty.equation.output.labels.empty());
  CHECK(empty.equation.output.offset == 5);
}

TEST_CASE("support einsum: labels output first, then summed ones", "[support][einsum]") {
  CHECK(parseEinsum("bij,bjk->bik").equation.labelsOutputFirst() == "bikj");
  CHECK(parseEinsum("ij,jk,kl->li").equation.labelsOutputFirst() == "lijk");
  CHECK(parseEinsum("ij->").equation.labelsOutputFirst() == "ij");
}

TEST_CASE("support einsum: errors are values", "[support][einsum]") {
  EinsumParse implicit = parseEinsum("ij,jk");
  CHECK(implicit.error == EinsumParse::Error::MissingArrow);
  CHECK(implicit.message("ij,jk") == "equation needs an explicit output '->'");

  EinsumParse dots = parseEinsum("...ij->ij");
  CHECK(dots.error == EinsumParse::Error::UnexpectedCharacter);
  CHECK(dots.errorOffset == 0);
  CHECK(dots.message("...ij->ij") == "unexpected character in equation: '.'");

  // ',' is a separator only before the arrow; a second arrow is two bad characters.
  EinsumParse comma = parseEinsum("ij->i,j");
  CHECK(comma.error == EinsumParse::Error::UnexpectedCharacter);
  CHECK(comma.errorOffset == 5);
  CHECK(parseEinsum("i->j->k").errorOffset == 4);
  CHECK(parseEinsum("i1->i").errorOffset == 1);
}
