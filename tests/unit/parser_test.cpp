// Unit tests of the IR builder: what each surface form becomes in the IR, and
// where errors point.
#include "frontend/Parser.h"

#include "tests/unit/TestHelpers.h"

#include <catch2/catch.hpp>

using namespace shardc;

namespace {

/// Parses `text`; the SourceFile must outlive the module's locations.
struct Parsed {
  explicit Parsed(std::string text) : file("test.shd", std::move(text)) {
    module = parseModule(file, diags);
  }
  SourceFile file;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;

  std::vector<std::string> errors() const { return testing::errorMessages(diags); }
};

} // namespace

TEST_CASE("every mesh form of the language builds", "[parser]") {
  Parsed p(R"(
@mesh_xy   = <["x"=2, "y"=4]>
@mesh_0    = {<["a"=4, "b"=2]>, device_ids=[7, 6, 5, 4, 3, 2, 1, 0]}
@mesh_full = <"devices"=8>
@empty     = <[]>
@on_dev3   = <[], device_ids=[3]>
@mesh_p    = <["a"=2, "b"=2], device_ids=[1, 0, 3, 2]>
)");
  REQUIRE(p.errors().empty());
  REQUIRE(p.module->meshes.size() == 6);
  const Mesh *m0 = p.module->findMesh("mesh_0");
  REQUIRE(m0);
  CHECK(m0->axes.size() == 2);
  CHECK(m0->deviceAt(0) == 7);
  CHECK(p.module->findMesh("mesh_full")->axes.at(0).name == "devices");
  CHECK(p.module->findMesh("empty")->isEmpty());
  CHECK(p.module->findMesh("on_dev3")->isMaximal());
  CHECK(p.module->deviceCount() == 8);
}

TEST_CASE("a program of one-device meshes runs on a device for every id", "[parser]") {
  // The meshes with axes set the count; one-device meshes only when alone.
  CHECK(Parsed("@d2 = <[], device_ids=[2]>\n@d0 = <[], device_ids=[0]>\n").module->deviceCount() ==
        3);
  CHECK(Parsed("@e = <[]>\n@d5 = <[], device_ids=[5]>\n").module->deviceCount() == 6);
  CHECK(Parsed("@e = <[]>\n").module->deviceCount() == 1);
  CHECK(Parsed("@d1 = <[], device_ids=[1]>\n@m = <[\"x\"=4]>\n").module->deviceCount() == 4);
}

TEST_CASE("shardings keep open dims, priorities, sub-axes and replicated axes", "[parser]") {
  Parsed p(R"(
@m = <["x"=2, "y"=8, "z"=2]>
%a : tensor<4x8x2xf32> sharding<@m, [{"x"}p1, {"y":(2)2, ?}, {?}p2], replicated={"z"}>
)");
  REQUIRE(p.errors().empty());
  const Value &a = *p.module->snippet.body.args.at(0);
  REQUIRE(a.sharding);
  const Sharding &s = *a.sharding;
  CHECK(s.meshName == "m");
  REQUIRE(s.dims.size() == 3);
  CHECK(s.dims[0].priority == 1);
  CHECK_FALSE(s.dims[0].open);
  CHECK(s.dims[1].open);
  CHECK(s.dims[1].axes.at(0).isSubAxis());
  CHECK(s.dims[1].axes.at(0).preSize == 2);
  CHECK(s.dims[1].axes.at(0).size == 2);
  CHECK(s.dims[2].axes.empty());
  CHECK(s.dims[2].open);
  CHECK(s.replicated.at(0).name == "z");
}

TEST_CASE("the seed's attribute spellings become value and result shardings", "[parser]") {
  Parsed p(R"(
@mesh_x = <["x"=4]>
%arg0 : tensor<8xf32> {sdy.sharding=<@mesh_x, [{"x"}]>}
%0 = reshape %arg0 {sdy.sharding_per_value=<[<@mesh_x, [{"x":(1)2}, {"x":(2)2}]>]>}
    : (tensor<8xf32>) -> tensor<2x4xf32>
)");
  REQUIRE(p.errors().empty());
  const Block &snippet = p.module->snippet.body;
  REQUIRE(snippet.args.at(0)->sharding);
  const Op &reshape = *snippet.ops.at(0);
  CHECK(reshape.kind == OpKind::Reshape);
  CHECK(reshape.attrs.empty()); // the sdy attribute was consumed
  REQUIRE(reshape.writtenOperandTypes.size() == 1);
  CHECK(reshape.writtenOperandTypes[0].shape == std::vector<int64_t>{8});
  const Value &r = *reshape.results.at(0);
  REQUIRE(r.writtenType);
  CHECK(r.writtenType->shape == std::vector<int64_t>{2, 4});
  REQUIRE(r.sharding);
  CHECK(r.sharding->dims.at(1).axes.at(0).preSize == 2);
}

TEST_CASE("a sharding-only declaration has no type; a stray brace warns", "[parser]") {
  Parsed p(R"(
@mesh_xy = <["w"=6, "x"=2, "y"=4, "z"=2]>
%arg4 : sharding<@mesh_xy, [{"x"}p1, {"y"}, {"z",?}p2], replicated={}}>
)");
  REQUIRE(p.errors().empty());
  REQUIRE(p.diags.diagnostics().size() == 1);
  CHECK(p.diags.diagnostics()[0].severity == Severity::Warning);
  CHECK(p.diags.diagnostics()[0].loc.line == 3);
  CHECK_FALSE(p.module->snippet.body.args.at(0)->typeKnown);
}

TEST_CASE("special op forms are stored as attributes", "[parser]") {
  Parsed p(R"(
@m = <["x"=2]>
func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %e = einsum "bij,bjk->bik" (%a, %b)
  %c = constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %s = sharding_constraint %e sharding<@m, [{"x"}, {}, {}]>
  %m = manual_computation (%s) in_shardings=[sharding<@m, [{"x"}, {}, {}]>]
      out_shardings=[<@m, [{"x"}, {}, {}]>] manual_axes={"x"} (%l: tensor<1x3x5xf32>) {
    return %l
  }
  return %m
}
)");
  REQUIRE(p.errors().empty());
  const Block &body = p.module->findFunction("f")->body;
  REQUIRE(body.ops.size() == 4);
  CHECK(body.ops[0]->attr("equation")->s == "bij,bjk->bik");
  const DenseLiteral &dense = body.ops[1]->attr("value")->dense;
  CHECK_FALSE(dense.splat);
  CHECK(dense.shape == std::vector<int64_t>{2, 2});
  CHECK(dense.elements.size() == 4);
  CHECK(dense.elements[3].i == 4);
  CHECK(body.ops[2]->attr("sharding")->kind == Attribute::Kind::Sharding);
  const Op &manual = *body.ops[3];
  CHECK(manual.attr("in_shardings")->shardings.size() == 1);
  CHECK(manual.attr("manual_axes")->axes.at(0).name == "x");
  REQUIRE(manual.body);
  CHECK(manual.body->args.size() == 1);
  CHECK(manual.body->returned.at(0) == manual.body->args.at(0).get());
}

TEST_CASE("a manual_computation body sees only its own arguments", "[parser]") {
  Parsed p(R"(
@m = <["x"=2]>
func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = manual_computation (%a) in_shardings=[<@m, [{"x"}]>] out_shardings=[<@m, [{"x"}]>]
      manual_axes={"x"} (%l: tensor<2xf32>) {
    %s = add %l, %a
    return %s
  }
  return %r
}
)");
  REQUIRE(p.errors().size() == 1);
  CHECK(p.errors()[0] == "use of value %a from outside a manual_computation body");
}

TEST_CASE("a failed statement's value used in a manual_computation body is one error", "[parser]") {
  // %b is unknown above the body and hidden inside it; its statement's error
  // is the only one (the builder once dereferenced the failed value here).
  Parsed p(R"(
@m = <["x"=2]>
func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = bogus_op %a
  %r = manual_computation (%a) in_shardings=[<@m, [{"x"}]>] out_shardings=[<@m, [{"x"}]>]
      manual_axes={"x"} (%l: tensor<2xf32>) {
    %s = add %l, %b
    return %s
  }
  return %r
}
)");
  REQUIRE(p.errors().size() == 1);
  CHECK(p.errors()[0] == "unknown op: bogus_op");
}

TEST_CASE("syntax errors on several lines are all reported", "[parser][errors]") {
  Parsed p("@m = <[\"x\"=2]>\n"
           "func @f(%a: tensor<4xf32> sharding<@m, [{\"x\"]>) -> tensor<4xf32> {\n"
           "  %b = neg %a $\n"
           "  return %b\n"
           "}\n");
  CHECK_FALSE(p.module);
  auto errors = p.errors();
  REQUIRE(errors.size() >= 2);
  CHECK(errors[0] == "syntax error - unexpected ']'; expected '}' or ','");
  CHECK(p.diags.diagnostics()[0].loc.line == 2);
  CHECK(p.diags.diagnostics()[0].loc.col == 45);
  CHECK(errors[1] == "syntax error - unexpected character: '$'");
  CHECK(p.diags.diagnostics()[1].loc.line == 3);
}

TEST_CASE("columns count bytes after non-ASCII text on the line", "[parser][errors]") {
  // "é" is two bytes in UTF-8; ANTLR counts it as one code point.
  Parsed p("@m = <[\"é\"=2]> @n = <[\"x\"=2]> $\n");
  REQUIRE(p.errors().size() == 1);
  const Diagnostic &d = p.diags.diagnostics()[0];
  CHECK(d.loc.col == 32);
  CHECK(p.file.line(1).substr(d.loc.col - 1, 1) == "$");
}

TEST_CASE("one mistake gives one error: uses of a failed statement are silent",
          "[parser][errors]") {
  Parsed p(R"(
func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = tanhh %a
  %c = add %b, %b
  %d = add %c
  %e = neg %d
  return %e
}
)");
  REQUIRE(p.module);
  auto errors = p.errors();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "unknown op: tanhh");
  REQUIRE(p.diags.diagnostics()[0].notes.size() == 1);
  CHECK(p.diags.diagnostics()[0].notes[0].message == "did you mean tanh?");
  CHECK(errors[1] == "add - expected 2 operands, got 1");
  // The ill-formed `add` is left out of the IR.
  CHECK(p.module->findFunction("f")->body.ops.size() == 2);
}

TEST_CASE("undefined and redefined values", "[parser][errors]") {
  Parsed p(R"(
func @f(%input: tensor<4xf32>) -> tensor<4xf32> {
  %b = neg %inpt
  %input = neg %input
  return %input
}
)");
  auto errors = p.errors();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "use of undefined value %inpt");
  CHECK(p.diags.diagnostics()[0].notes.at(0).message == "did you mean %input?");
  CHECK(errors[1] == "redefinition of value %input");
}

TEST_CASE("ragged dense literals and bad priorities are errors", "[parser][errors]") {
  Parsed p(R"(
@m = <["x"=2]>
%c = constant dense<[[1, 2], [3]]> : tensor<2x2xf32>
%a : tensor<4xf32> sharding<@m, [{"x"}q1]>
)");
  auto errors = p.errors();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "dense literal - ragged nesting: rows have different lengths");
  CHECK(errors[1] == "expected a priority such as p0 or p1, got: q1");
}

TEST_CASE("tensor types decode with exact error offsets", "[types]") {
  std::string message;
  size_t offset = 0;
  auto t = parseTensorType("tensor<4x8xf32>", message, offset);
  REQUIRE(t);
  CHECK(t->shape == std::vector<int64_t>{4, 8});
  CHECK(t->dtype == DType::F32);
  CHECK(t->str() == "tensor<4x8xf32>");
  auto scalar = parseTensorType("tensor<i1>", message, offset);
  REQUIRE(scalar);
  CHECK(scalar->rank() == 0);

  CHECK_FALSE(parseTensorType("tensor<4x8xf16>", message, offset));
  CHECK(message == "unknown element type: f16 (expected f32, f64, i32, i64 or i1)");
  CHECK(offset == 11);
  CHECK_FALSE(parseTensorType("tensor<4x?xf32>", message, offset));
  CHECK(offset == 9);
  CHECK_FALSE(parseTensorType("tensor<99999999999999999999xf32>", message, offset));
  CHECK(message == "tensor dimension is too large");
  CHECK_FALSE(parseTensorType("tensor<4294967296x4294967296xf32>", message, offset));
  CHECK(message == "tensor has too many elements");
}

TEST_CASE("invalid UTF-8 and NUL bytes are rejected before parsing", "[parser][errors]") {
  Parsed bad(std::string("@m = <[\"x\"=2]>\n// \xff\n"));
  CHECK_FALSE(bad.module);
  REQUIRE(bad.errors().size() == 1);
  CHECK(bad.errors()[0] == "invalid UTF-8 byte 0xFF: the file is not UTF-8 text");
  CHECK(bad.diags.diagnostics()[0].loc.line == 2);

  Parsed nul(std::string("@m = <[\"x\"=2]>\0", 15));
  CHECK_FALSE(nul.module);
  CHECK(nul.errors().at(0) == "file is not text: NUL byte at offset 14");
}

TEST_CASE("closestMatch suggests only plausible typos", "[diagnostics]") {
  CHECK(closestMatch("tanhh", {"tanh", "exp", "add"}) == "tanh");
  CHECK(closestMatch("mesh_xz", {"mesh_xy", "mesh"}) == "mesh_xy");
  CHECK(closestMatch("completely", {"tanh", "exp"}).empty());
  CHECK(closestMatch("x", {"x", "y"}).empty()); // an exact match is no typo
  CHECK(closestMatch("z", {"x", "y"}).empty()); // a tie is a guess
}

TEST_CASE("text rendering has the source line and a caret under the token", "[diagnostics]") {
  SourceFile file("f.shd", "line one\n  %b = tanhh %a\n");
  Diagnostic d{Severity::Error, Loc{&file, 2, 8, 5}, "unknown op: tanhh", {}};
  d.notes.push_back(Diagnostic{Severity::Note, Loc{}, "did you mean tanh?", {}});
  CHECK(renderText(d, {}) == "f.shd:2:8: error: unknown op: tanhh\n"
                             "  %b = tanhh %a\n"
                             "       ^~~~~\n"
                             "note: did you mean tanh?\n");
  std::string colored = renderText(d, RenderOptions{true});
  CHECK(colored.find("\x1b[") != std::string::npos);
}

TEST_CASE("the error limit says once that errors were left out", "[diagnostics]") {
  SourceFile file("f.shd", "x\n");
  DiagnosticEngine diags;
  diags.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    diags.error(Loc{&file, 1, 1, 1}, "error " + std::to_string(i)).note(Loc{}, "a note");
  CHECK(diags.errorCount() == 2);
  CHECK(diags.droppedErrorCount() == 3);
  REQUIRE(diags.diagnostics().size() == 3);
  CHECK(diags.diagnostics()[2].severity == Severity::Remark);
  CHECK(diags.diagnostics()[2].message ==
        "too many errors; stopping here (--error-limit=0 shows them all)");
}

TEST_CASE("anyOp visits the ops as walkOps does and stops at the first match", "[parser]") {
  Parsed p(R"(
func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = exp %a
  %c = for %i = 0 to 2 carry(%ck = %b) {
    %d = tanh %ck
    return %d
  } : tensor<4xf32>
  %e = neg %c
  return %e
}
)");
  REQUIRE(p.errors().empty());
  const Block &body = p.module->findFunction("f")->body;
  std::vector<std::string> walked;
  walkOps(body, [&](Op &op) { walked.push_back(op.name()); });
  REQUIRE(walked == std::vector<std::string>{"exp", "for", "tanh", "neg"});

  // The visits up to the match, in the same order; nothing after it.
  auto visitsUntil = [&](const std::string &name) {
    std::vector<std::string> visited;
    bool found = anyOp(body, [&](const Op &op) {
      visited.push_back(op.name());
      return op.name() == name;
    });
    return std::make_pair(found, visited);
  };
  CHECK(visitsUntil("exp") == std::make_pair(true, std::vector<std::string>{"exp"}));
  CHECK(visitsUntil("tanh") ==
        std::make_pair(true, std::vector<std::string>{"exp", "for", "tanh"}));
  CHECK(visitsUntil("sqrt") == std::make_pair(false, walked));
}
