// The canonical printer (../shared/LANGUAGE.md section 7): a Module as `.shd`
// text that parses back to the same module, so that print(parse(print(m)))
// is exactly print(m). Every choice of spelling lives here:
//   - meshes first, then the seed-style snippet (sharded types, declarations,
//     statements), then functions, sections separated by one blank line;
//   - `TYPE SHARDING` for every annotated value, whichever spelling was read;
//   - attributes sorted by name; floats in their shortest exact form;
//   - a signature over 100 columns puts one parameter per line.
#include "ir/Printer.h"

#include <algorithm>
#include <exception>
#include <set>
#include <string_view>
#include <thread>
#include <type_traits>

namespace shardc {
namespace {

/// The printer's output: a string appended to. (An std::ostringstream paid a
/// stream sentry per insertion, a third of the printer's instructions.)
class Output {
public:
  Output &operator<<(std::string_view text) {
    text_.append(text);
    return *this;
  }
  Output &operator<<(char c) {
    text_.push_back(c);
    return *this;
  }
  template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  Output &operator<<(Int n) {
    text_ += std::to_string(n);
    return *this;
  }
  std::string take() { return std::move(text_); }

private:
  std::string text_;
};

/// Functions whose one-line signature is longer than this print one
/// parameter per line (aligned after the `(`) and the results on their own
/// line, as in LANGUAGE.md section 4.
constexpr size_t kMaxSignatureWidth = 100;

/// From this many ops on, a block's second half is printed on a second thread
/// where there is a second core, into a text of its own appended after the
/// first half's (a 100,000-op program to --emit=spmd: about 0.1 s to print).
constexpr size_t kSplitPrintOps = 8192;

/// Prints a module into one stream: functions, blocks (function and
/// manual_computation bodies) and ops, each at its indentation.
class ModulePrinter {
public:
  std::string printModule(const Module &m);

private:
  Output os_;
  /// The module's maximal meshes (no axes, one device).
  std::set<std::string> maximal_;
  /// Whether a block is being printed on two threads: the blocks inside it
  /// are not split again.
  bool split_ = false;

  /// A sharding as the module can read it back: on a maximal mesh without
  /// dims (`sharding<@dev3, []>`, Shardy's only form), whatever dims the
  /// passes gave it (export fills one empty dim per tensor dim).
  std::string sharding(const Sharding &s) const { return "sharding" + shardingBody(s); }
  std::string shardingBody(const Sharding &s) const {
    if (s.dims.empty() || !maximal_.count(s.meshName))
      return printShardingBody(s);
    Sharding bare = s;
    bare.dims.clear();
    return printShardingBody(bare);
  }

  /// `%name`. An operand the frontend could not resolve is null; such a
  /// module has errors and is printed only for debugging.
  static std::string valueRef(const Value *v) { return v ? "%" + v->name : "%<undefined>"; }

  std::string annotated(const TensorType &t, const std::optional<Sharding> &s) const {
    std::string out = printType(t);
    if (s)
      out += " " + sharding(*s);
    return out;
  }

  /// `%x: tensor<...> sharding<...>`, or `%x: sharding<...>` for a seed-style
  /// declaration without a type.
  std::string param(const Value &v) const {
    std::string out = valueRef(&v) + ": ";
    if (v.typeKnown)
      return out + annotated(v.type, v.sharding);
    if (v.writtenType)
      return out + annotated(*v.writtenType, v.sharding);
    if (v.sharding)
      return out + sharding(*v.sharding);
    return out + printType(v.type);
  }

  std::string resultSpecs(const Function &f) const;
  void printFunction(const Function &f);
  void printBlockBody(const Block &b, const std::string &indent);
  void printOp(const Op &op, const std::string &indent);
  void printControlFlow(const Op &op, const std::string &indent);
  /// `{`, the region's ops and return, `}` at `indent`.
  void printRegion(const Block &region, const std::string &indent) {
    os_ << "{\n";
    printBlockBody(region, indent + "  ");
    os_ << indent << "}";
  }
};

void ModulePrinter::printControlFlow(const Op &op, const std::string &indent) {
  // `carry(%h = %x, ...)`: the names the regions give the carried values.
  auto carry = [&](const Block &region) {
    std::vector<Value *> args = Op::carriedArgs(op, region);
    std::string out = "carry(";
    for (size_t i = 0; i < op.operands.size(); ++i)
      out += (i ? ", " : "") + valueRef(i < args.size() ? args[i] : nullptr) + " = " +
             valueRef(op.operands[i]);
    return out + ")";
  };
  switch (op.kind) {
  case OpKind::For: {
    os_ << "for " << valueRef(op.body->args.empty() ? nullptr : op.body->args[0].get()) << " = "
        << op.get(attrs::lower, 0) << " to " << op.get(attrs::upper, 0);
    if (op.attr(attrs::loopStep))
      os_ << " step " << op.get(attrs::loopStep, 1);
    os_ << " " << carry(*op.body) << " ";
    printRegion(*op.body, indent);
    break;
  }
  case OpKind::While:
    os_ << "while " << carry(*op.cond) << " cond ";
    printRegion(*op.cond, indent);
    os_ << " do ";
    printRegion(*op.body, indent);
    break;
  case OpKind::If:
    os_ << "if " << valueRef(op.operands.empty() ? nullptr : op.operands[0]) << " ";
    printRegion(*op.body, indent);
    if (op.elseBody && (!op.elseBody->ops.empty() || op.elseBody->hasReturn)) {
      os_ << " else ";
      printRegion(*op.elseBody, indent);
    }
    break;
  default: {
    os_ << "call @" << op.get(attrs::callee, "") << "(";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os_ << (i ? ", " : "") << valueRef(op.operands[i]);
    os_ << ")";
    break;
  }
  }
}

std::string ModulePrinter::resultSpecs(const Function &f) const {
  if (f.results.size() == 1)
    return annotated(f.results[0].type, f.results[0].sharding);
  std::string out = "(";
  for (size_t i = 0; i < f.results.size(); ++i) {
    if (i)
      out += ", ";
    out += annotated(f.results[i].type, f.results[i].sharding);
  }
  return out + ")";
}

void ModulePrinter::printFunction(const Function &f) {
  std::vector<std::string> params;
  for (const auto &arg : f.body.args)
    params.push_back(param(*arg));
  bool hasResults = !f.results.empty() || f.resultsWritten;
  std::string results = hasResults ? resultSpecs(f) : "";

  std::string head = "func @" + f.name + "(";
  std::string oneLine = head;
  for (size_t i = 0; i < params.size(); ++i)
    oneLine += (i ? ", " : "") + params[i];
  oneLine += ")";
  if (hasResults)
    oneLine += " -> " + results;
  oneLine += " {";

  if (oneLine.size() <= kMaxSignatureWidth) {
    os_ << oneLine << "\n";
  } else {
    std::string align(head.size(), ' ');
    os_ << head;
    for (size_t i = 0; i < params.size(); ++i) {
      if (i)
        os_ << ",\n" << align;
      os_ << params[i];
    }
    os_ << ")";
    if (hasResults)
      os_ << "\n    -> " << results;
    os_ << " {\n";
  }
  printBlockBody(f.body, "  ");
  os_ << "}\n";
}

void ModulePrinter::printBlockBody(const Block &b, const std::string &indent) {
  const size_t n = b.ops.size();
  size_t firstHalf = n;
  ModulePrinter second;
  std::thread secondHalf;
  std::exception_ptr failure;
  if (n >= kSplitPrintOps && !split_ && std::thread::hardware_concurrency() > 1) {
    firstHalf = n / 2;
    split_ = second.split_ = true;
    second.maximal_ = maximal_;
    secondHalf = std::thread([&] {
      try {
        for (size_t i = firstHalf; i < n; ++i)
          second.printOp(*b.ops[i], indent);
      } catch (...) {
        failure = std::current_exception();
      }
    });
  }
  try {
    for (size_t i = 0; i < firstHalf; ++i)
      printOp(*b.ops[i], indent);
  } catch (...) {
    if (secondHalf.joinable())
      secondHalf.join();
    split_ = false;
    throw;
  }
  if (secondHalf.joinable()) {
    secondHalf.join();
    split_ = false;
    if (failure)
      std::rethrow_exception(failure);
    os_ << second.os_.take();
  }
  if (b.hasReturn || !b.returned.empty()) {
    os_ << indent << "return";
    for (size_t i = 0; i < b.returned.size(); ++i)
      os_ << (i ? ", " : " ") << valueRef(b.returned[i]);
    os_ << "\n";
  }
}

void ModulePrinter::printOp(const Op &op, const std::string &indent) {
  os_ << indent;
  for (size_t i = 0; i < op.results.size(); ++i)
    os_ << (i ? ", " : "") << valueRef(op.results[i].get());
  if (!op.results.empty() || !isControlFlow(op.kind))
    os_ << " = ";

  // Attributes printed by the op's own syntax rather than in `{...}`.
  std::set<std::string> special;
  auto operandList = [&]() {
    std::string out;
    for (size_t i = 0; i < op.operands.size(); ++i)
      out += (i ? ", " : "") + valueRef(op.operands[i]);
    return out;
  };

  switch (op.kind) {
  case OpKind::Einsum: {
    special.insert("equation");
    const Attribute *eq = op.attr(attrs::equation);
    os_ << "einsum " << printStringLiteral(eq ? eq->s : std::string()) << " (" << operandList()
        << ")";
    break;
  }
  case OpKind::Constant: {
    special.insert("value");
    const Attribute *value = op.attr(attrs::dense);
    os_ << "constant "
        << (value && value->kind == Attribute::Kind::Dense ? printDense(value->dense)
                                                           : std::string("dense<0>"));
    break;
  }
  case OpKind::ShardingConstraint:
  case OpKind::Reshard: {
    special.insert("sharding");
    os_ << op.name() << " " << operandList();
    const Attribute *s = op.attr(attrs::sharding);
    if (s && !s->shardings.empty())
      os_ << " " << sharding(s->shardings.front());
    break;
  }
  case OpKind::ManualComputation: {
    special = {"in_shardings", "out_shardings", "manual_axes"};
    auto list = [&](const char *name) {
      std::string out = "[";
      if (const Attribute *a = op.attr(name))
        for (size_t i = 0; i < a->shardings.size(); ++i)
          out += (i ? ", " : "") + sharding(a->shardings[i]);
      return out + "]";
    };
    const Attribute *axes = op.attr(attrs::manualAxes);
    os_ << "manual_computation (" << operandList() << ") in_shardings=" << list("in_shardings")
        << " out_shardings=" << list("out_shardings")
        << " manual_axes=" << printAxisSet(axes ? axes->axes : std::vector<AxisRef>{}) << " (";
    if (op.body)
      for (size_t i = 0; i < op.body->args.size(); ++i)
        os_ << (i ? ", " : "") << param(*op.body->args[i]);
    os_ << ") {\n";
    if (op.body)
      printBlockBody(*op.body, indent + "  ");
    os_ << indent << "}";
    break;
  }
  case OpKind::AutoAxes:
  case OpKind::ExplicitAxes: {
    special = {"axes", "in_shardings", "out_shardings"};
    const Attribute *axes = op.attr(attrs::axes);
    os_ << op.name() << " (" << operandList()
        << ") axes=" << printAxisSet(axes ? axes->axes : std::vector<AxisRef>{});
    for (const char *name : {"in_shardings", "out_shardings"})
      if (const Attribute *a = op.attr(name)) {
        os_ << " " << name << "=[";
        for (size_t i = 0; i < a->shardings.size(); ++i)
          os_ << (i ? ", " : "") << sharding(a->shardings[i]);
        os_ << "]";
      }
    os_ << " (";
    for (size_t i = 0; i < op.body->args.size(); ++i)
      os_ << (i ? ", " : "") << param(*op.body->args[i]);
    os_ << ") {\n";
    printBlockBody(*op.body, indent + "  ");
    os_ << indent << "}";
    break;
  }
  case OpKind::For:
  case OpKind::While:
  case OpKind::If:
  case OpKind::Call:
    special = {"lower", "upper", "step", "callee"};
    printControlFlow(op, indent);
    break;
  default:
    os_ << op.name();
    if (!op.operands.empty())
      os_ << " " << operandList();
    break;
  }

  // A result whose type is unknown (type inference has not run) cannot carry
  // `TYPE SHARDING`; its sharding then goes into the seed's
  // sdy.sharding_per_value attribute, which the frontend reads back.
  std::vector<const TensorType *> types;
  bool allTyped = true;
  for (const auto &r : op.results) {
    const TensorType *t = r->typeKnown ? &r->type : r->writtenType ? &*r->writtenType : nullptr;
    types.push_back(t);
    allTyped &= t != nullptr;
  }
  bool perValue = !allTyped && op.results.size() == 1 && op.results[0]->sharding.has_value() &&
                  opInfo(op.kind).group != OpGroup::Manual;

  std::vector<const NamedAttribute *> attrs;
  for (const auto &a : op.attrs)
    if (!special.count(a.name) && !(perValue && a.name == "sdy.sharding_per_value"))
      attrs.push_back(&a);
  std::stable_sort(
      attrs.begin(), attrs.end(),
      [](const NamedAttribute *a, const NamedAttribute *b) { return a->name < b->name; });
  // An op without operands always writes its attribute dict, even `{}`: the
  // grammar requires it (it keeps `%r = iota` apart from a following `%v : T`).
  bool needsDict = op.operands.empty() && op.kind != OpKind::Constant;
  if (opInfo(op.kind).group != OpGroup::Manual && !isControlFlow(op.kind) &&
      (!attrs.empty() || perValue || needsDict)) {
    os_ << " {";
    bool first = true;
    for (const NamedAttribute *a : attrs) {
      os_ << (first ? "" : ", ") << a->name << " = " << printAttribute(a->value);
      first = false;
    }
    if (perValue)
      os_ << (first ? "" : ", ") << "sdy.sharding_per_value = <["
          << shardingBody(*op.results[0]->sharding) << "]>";
    os_ << "}";
  }

  if (allTyped && !op.results.empty()) {
    os_ << " : ";
    for (size_t i = 0; i < op.results.size(); ++i)
      os_ << (i ? ", " : "") << annotated(*types[i], op.results[i]->sharding);
  }
  os_ << "\n";
}

std::string ModulePrinter::printModule(const Module &m) {
  bool needBlank = false;
  auto section = [&]() {
    if (needBlank)
      os_ << "\n";
    needBlank = true;
  };

  for (const auto &mesh : m.meshes)
    if (mesh->isMaximal())
      maximal_.insert(mesh->name);
  if (!m.meshes.empty()) {
    section();
    for (const auto &mesh : m.meshes)
      os_ << "@" << mesh->name << " = " << printMeshBody(*mesh) << "\n";
  }

  // The snippet: sharded types first, then declarations, then statements.
  // A declaration `%a: tensor<8xf32>` directly followed by a sharded type
  // `sharding<...> : tensor<...>` would read as one annotated type.
  const Function &snippet = m.snippet;
  if (!m.typeDecls.empty() || !snippet.body.args.empty() || !snippet.body.ops.empty()) {
    section();
    for (const auto &decl : m.typeDecls)
      os_ << sharding(decl.sharding) << " : " << printType(decl.type) << "\n";
    for (const auto &arg : snippet.body.args)
      os_ << param(*arg) << "\n";
    for (const auto &op : snippet.body.ops)
      printOp(*op, "");
  }

  for (const auto &f : m.functions) {
    section();
    printFunction(*f);
  }
  return os_.take();
}

} // namespace

std::string printModule(const Module &module) {
  ModulePrinter p;
  return p.printModule(module);
}

} // namespace shardc
