// The IR builder: parse tree -> IR, shared by the frontend's files
// (Parser.cpp: the module and meshes; BuildTypes.cpp: types, shardings,
// attributes and literals; BuildStatements.cpp: functions, blocks and
// statements; BuildControlFlow.cpp: for, while, if and call). Internal to
// frontend/.
#pragma once

#include "frontend/SyntaxErrors.h"
#include "ir/IR.h"

#include "ShdParser.h"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <vector>

namespace shardc::frontend {

using P = shd::ShdParser;

/// Whether `node`'s class is exactly T. Every class compared here has a key
/// function (an out-of-line virtual member), so the program holds one
/// type_info for it and comparing addresses is exact; type_info's operator==
/// would compare the names of two different classes with strcmp.
template <class T> bool isExactly(antlr4::tree::ParseTree *node) {
  return &typeid(*node) == &typeid(T);
}

/// `node` as the context class T, or null: dynamic_cast's answer for a class
/// nothing derives from (a rule without labelled alternatives, or one
/// alternative). The builder asks this of every node, and a dynamic_cast
/// walks the class hierarchy each time.
template <class T> T *nodeAs(antlr4::tree::ParseTree *node) {
  return node && isExactly<T>(node) ? static_cast<T *>(node) : nullptr;
}

/// The children of `ctx` that are tokens of `type`: the generated accessor
/// (VALUE(), IDENT()) without its two dynamic_casts per child. A tree with
/// error nodes never reaches the builder.
inline std::vector<antlr4::tree::TerminalNode *> tokensOf(antlr4::ParserRuleContext *ctx,
                                                          size_t type) {
  std::vector<antlr4::tree::TerminalNode *> out;
  for (antlr4::tree::ParseTree *child : ctx->children) {
    // ParseTree is a non-virtual base of TerminalNode: the cast is static.
    if (isExactly<antlr4::tree::TerminalNodeImpl>(child)) {
      auto *token = static_cast<antlr4::tree::TerminalNode *>(child);
      if (token->getSymbol()->getType() == type)
        out.push_back(token);
    }
  }
  return out;
}

/// The first child of `ctx` of the context class T (as nodeAs requires), or
/// null: the generated accessor without its two dynamic_casts per child.
template <class T> T *firstChild(antlr4::ParserRuleContext *ctx) {
  for (antlr4::tree::ParseTree *child : ctx->children)
    if (T *found = nodeAs<T>(child))
      return found;
  return nullptr;
}

/// The children of `ctx` of the context class T (as nodeAs requires): the
/// generated list accessor without its dynamic_casts.
template <class T> std::vector<T *> childrenOf(antlr4::ParserRuleContext *ctx) {
  std::vector<T *> out;
  for (antlr4::tree::ParseTree *child : ctx->children)
    if (T *found = nodeAs<T>(child))
      out.push_back(found);
  return out;
}

/// `node` as a context of rule `ruleIndex` (a rule with labelled
/// alternatives, whose contexts derive from T), or null: dynamic_cast's
/// answer without its walk of the class hierarchy.
template <class T> T *ruleNodeAs(antlr4::tree::ParseTree *node, size_t ruleIndex) {
  // Every node of a tree the builder reads is a rule context or a token.
  if (!node || isExactly<antlr4::tree::TerminalNodeImpl>(node))
    return nullptr;
  auto *rule = static_cast<antlr4::RuleContext *>(node);
  return rule->getRuleIndex() == ruleIndex ? static_cast<T *>(rule) : nullptr;
}

/// The first child of `ctx` of rule `ruleIndex`, as ruleNodeAs gives it.
template <class T> T *firstRuleChild(antlr4::ParserRuleContext *ctx, size_t ruleIndex) {
  for (antlr4::tree::ParseTree *child : ctx->children)
    if (T *found = ruleNodeAs<T>(child, ruleIndex))
      return found;
  return nullptr;
}

class IRBuilder {
public:
  IRBuilder(const SourceFile &file, DiagnosticEngine &diags, Module &module)
      : file_(file), diags_(diags), module_(module) {}

  /// Builds the whole module from a finished parse tree.
  void build(P::ModuleContext *ctx);

  // The same build fed piece by piece while the parser is still reading
  // (frontend/BuildWhileParsing.h): beginModule, then in source
  // order each top-level item that is not a function, and for a function its
  // header (parsed up to the body's `{`), each item of its body as it is
  // completed, and its end; then endModule. Each piece reads only its own,
  // finished subtree.
  void beginModule();
  void buildTopItem(P::TopItemContext *item);
  /// `statements`: the body's length when known (sizes its scope), else 0.
  void beginFunction(P::FuncDefContext *ctx, size_t statements);
  void buildBodyItem(antlr4::tree::ParseTree *item);
  void endFunction(P::FuncDefContext *ctx);
  void endModule();

private:
  // ---- locations and literals -------------------------------------------------
  Loc loc(antlr4::Token *t) const { return tokenLoc(file_, t); }
  Loc loc(antlr4::tree::TerminalNode *n) const { return n ? loc(n->getSymbol()) : Loc{}; }
  Loc loc(antlr4::ParserRuleContext *c) const { return ruleLoc(file_, c); }

  std::optional<int64_t> parseInt(antlr4::Token *t);
  std::optional<int64_t> parseInt(antlr4::tree::TerminalNode *n) {
    return parseInt(n->getSymbol());
  }
  static std::string unquote(const std::string &s) { return s.substr(1, s.size() - 2); }
  /// A token's text in the file, without a copy (token positions are byte
  /// offsets, frontend/Lexer.h).
  std::string_view text(antlr4::tree::TerminalNode *n) const;
  /// A %value or @symbol token's name, without the sigil.
  std::string_view nameOf(antlr4::tree::TerminalNode *n) const { return text(n).substr(1); }

  // ---- pieces -------------------------------------------------------------------
  void buildMesh(P::MeshDefContext *ctx);
  std::optional<TensorType> buildType(P::TensorTypeContext *ctx);
  Sharding buildSharding(P::ShardingContext *ctx);
  AxisRef buildAxisRef(P::AxisRefContext *ctx);
  std::vector<AxisRef> buildAxisSet(P::AxisSetContext *ctx);
  Attribute buildAttrValue(P::AttrValueContext *ctx);
  std::vector<NamedAttribute> buildAttrDict(P::AttrDictContext *ctx);
  bool buildLiteral(P::LiteralContext *ctx, DenseLiteral &out, size_t depth);

  /// An annotated type: the type, and a sharding written either way
  /// (`T sharding<...>`, `sharding<...> : T`, `T {sdy.sharding=...}`).
  struct Annotated {
    std::optional<TensorType> type;
    std::optional<Sharding> sharding;
    Loc typeLoc;
    bool typeInvalid = false; // written, but not decoded (reported)
  };
  template <typename AnnotatedCtx> Annotated buildAnnotated(AnnotatedCtx *ctx);

  /// The part after `:` in a statement: result types, and operand types when
  /// written in the functional form `(T, T) -> T`.
  struct TypeSpec {
    bool present = false;
    bool invalid = false; // some type failed to decode (reported)
    bool functional = false;
    std::vector<Annotated> operands;
    std::vector<Annotated> results;
    Loc loc;
  };
  template <typename SpecCtx> TypeSpec buildTypeSpec(SpecCtx *ctx);

  // ---- functions, blocks and statements -------------------------------------------
  void buildBlock(P::BlockContext *ctx, Block &block, bool allowMissingReturn);
  /// One child of a block: a statement, a control flow statement or the
  /// return (the braces are skipped).
  void buildBlockItem(antlr4::tree::ParseTree *item, Block &block);
  void finishBlock(Block &block, bool allowMissingReturn);
  Value *addParam(Block &block, antlr4::tree::TerminalNode *name, Annotated a);
  void buildStatement(const std::vector<antlr4::tree::TerminalNode *> &resultNames,
                      P::OpExprContext *expr, TypeSpec typeSpec, Block &block);
  /// Looks a value up; null (after reporting) when it is not defined, and
  /// null silently when its statement failed to build.
  Value *lookup(antlr4::tree::TerminalNode *name);
  /// Marks the results of a statement that was not built: uses of them are
  /// silently null, so one mistake gives one error.
  void poison(const std::vector<antlr4::tree::TerminalNode *> &names);
  void define(Value *value);
  void addOperands(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names);
  /// One result per written name, its type left to inference.
  void addResults(Op &op, const std::vector<antlr4::tree::TerminalNode *> &names);
  void applyTypeSpec(Op &op, TypeSpec spec);
  /// A control flow op (BuildControlFlow.cpp): for, while, if, call, with
  /// its result names (none without `=`) and the types after it.
  void buildControl(const std::vector<antlr4::tree::TerminalNode *> &resultNames,
                    P::ControlExprContext *expr, P::TypeSpecContext *typeSpec, Block &block);
  /// Builds `region` in a new scope that sees the values above it
  /// (implicit capture), with `args` (name, type) as its arguments.
  void buildRegion(P::BlockContext *ctx, Block &region,
                   const std::vector<antlr4::tree::TerminalNode *> &args, bool allowMissingReturn);
  void applySdyShardings(Op &op, std::vector<NamedAttribute> &attrs);
  /// auto_axes / explicit_axes (BuildRegions.cpp): attributes and an
  /// isolated body, like manual_computation's.
  void buildAxesRegion(Op &op, P::AxesOpContext *ctx);
  /// Reports a wrong operand count; false when it is wrong.
  bool checkOperandCount(Op &op);

  const SourceFile &file_;
  DiagnosticEngine &diags_;
  Module &module_;
  /// Visible values, innermost scope last. A manual_computation body is
  /// isolated: it starts a fresh stack and sees only its own arguments.
  /// Hashed: a function of 100,000 statements looks a name up per operand.
  /// The keys view the Value's name or the file's text, both outliving the
  /// builder, so that a lookup copies no string.
  using Scope = std::unordered_map<std::string_view, Value *>;
  /// Inside a function, the top-level snippets' scope (the first), which the
  /// function does not see: it sees its parameters and its own values.
  const Scope *topLevelScope() const;
  std::vector<Scope> scopes_;
  /// The scopes a manual_computation body cannot see (for the error message);
  /// they stay alive on the stack of the enclosing build.
  std::vector<const Scope *> hiddenScopes_;
  /// The function whose body is being built, and the names of those before.
  std::unique_ptr<Function> function_;
  std::map<std::string, Loc> functionNames_;
};

// The two rules with a top-level twin (annotatedType, typeSpec) share one
// template each; defined here because every builder file uses them.

template <typename AnnotatedCtx> IRBuilder::Annotated IRBuilder::buildAnnotated(AnnotatedCtx *ctx) {
  Annotated a;
  P::TensorTypeContext *tensorType = firstChild<P::TensorTypeContext>(ctx);
  a.type = buildType(tensorType);
  a.typeLoc = loc(tensorType);
  a.typeInvalid = !a.type;
  if (P::ShardingContext *sharding = firstChild<P::ShardingContext>(ctx))
    a.sharding = buildSharding(sharding);
  if (P::AttrDictContext *attrDict = firstChild<P::AttrDictContext>(ctx)) {
    for (NamedAttribute &attr : buildAttrDict(attrDict)) {
      if (attr.name != "sdy.sharding") {
        diags_.error(attr.nameLoc,
                     fmt::format("unknown attribute on a type: {} (only sdy.sharding is "
                                 "allowed here)",
                                 attr.name));
      } else if (attr.value.kind != Attribute::Kind::Sharding) {
        diags_.error(attr.value.loc, "sdy.sharding - expected a sharding <@mesh, [...]>");
      } else if (a.sharding) {
        diags_.error(attr.nameLoc, "sharding written twice for one value");
      } else {
        a.sharding = attr.value.shardings.front();
      }
    }
  }
  return a;
}

template <typename SpecCtx> IRBuilder::TypeSpec IRBuilder::buildTypeSpec(SpecCtx *ctx) {
  TypeSpec spec;
  if (!ctx)
    return spec;
  spec.present = true;
  spec.loc = loc(ctx);
  auto results = ctx->types;
  if (ctx->res) {
    spec.functional = true;
    for (auto *t : results)
      spec.operands.push_back(buildAnnotated(t));
    results = ctx->res->types;
  }
  for (auto *t : results)
    spec.results.push_back(buildAnnotated(t));
  for (const auto *list : {&spec.operands, &spec.results})
    for (const Annotated &a : *list)
      spec.invalid |= a.typeInvalid;
  return spec;
}

} // namespace shardc::frontend
