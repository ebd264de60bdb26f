// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptsource.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include "base/untrustedtext.h"
#include "model/scriptoperations.h"

namespace d2dpo {

namespace {

using torch::jit::TreeRef;

/// Deeper brackets than this are refused before parsing: the parser recurses once per level,
/// and TorchScript never writes more than a handful.
constexpr int kMaxBracketDepth = 100;

int bracketDepth(std::string_view source)
{
    int depth = 0, deepest = 0;
    for (char c : source) {
        if (c == '(' || c == '[' || c == '{')
            deepest = std::max(deepest, ++depth);
        else if (c == ')' || c == ']' || c == '}')
            --depth;
    }
    return deepest;
}

const std::string& identName(const TreeRef& ident) { return torch::jit::Ident(ident).name(); }

bool isVarNamed(const TreeRef& tree, std::initializer_list<std::string_view> names)
{
    return tree->kind() == torch::jit::TK_VAR &&
           std::find(names.begin(), names.end(), identName(tree->trees()[0])) != names.end();
}

/// `a.b.c` as {"a", "b", "c"}, or empty when it is not a plain chain of names.
std::vector<std::string> dottedName(const TreeRef& tree)
{
    if (tree->kind() == torch::jit::TK_VAR)
        return {identName(tree->trees()[0])};
    if (tree->kind() != '.')
        return {};
    std::vector<std::string> names = dottedName(tree->trees()[0]);
    if (!names.empty())
        names.push_back(identName(tree->trees()[1]));
    return names;
}

bool allLiteral(const TreeRef& list, bool (*literal)(const TreeRef&))
{
    const auto& items = list->trees();
    return std::all_of(items.begin(), items.end(), literal);
}

/// A value the compiler evaluates at load time must be one of the values TorchScript itself
/// writes there: numbers (also -inf, nan, 2 - 3), strings, None, booleans, tuples, lists and
/// dicts of them, a tensor constant (CONSTANTS.c0), torch.device("cpu") and float("inf").
bool isLiteral(const TreeRef& tree)
{
    using namespace torch::jit;
    switch (tree->kind()) {
    case TK_CONST:
    case TK_STRINGLITERAL:
    case TK_NONE:
    case TK_TRUE:
    case TK_FALSE:
        return true;
    case TK_VAR:
        return isVarNamed(tree, {"inf", "nan"});
    case TK_UNARY_MINUS:
        return isLiteral(tree->trees()[0]);
    case '+':
    case '-':
        return isLiteral(tree->trees()[0]) && isLiteral(tree->trees()[1]);
    case TK_TUPLE_LITERAL:
    case TK_LIST_LITERAL:
        return allLiteral(tree->trees()[0], isLiteral);
    case TK_DICT_LITERAL:
        return allLiteral(tree->trees()[0], isLiteral) && allLiteral(tree->trees()[1], isLiteral);
    case '.': {
        const std::vector<std::string> name = dottedName(tree);
        return name.size() == 2 && name[0] == "CONSTANTS";
    }
    case TK_APPLY: {
        const Apply apply(tree);
        const std::vector<std::string> callee = dottedName(apply.callee());
        const bool known = callee == std::vector<std::string>{"torch", "device"} ||
                           callee == std::vector<std::string>{"float"};
        return known && apply.attributes().empty() && apply.inputs().size() == 1 &&
               apply.inputs()[0].kind() == TK_STRINGLITERAL;
    }
    default:
        return false;
    }
}

/// A type annotation: names, dotted names, subscripts of them (Optional[List[int]]), None, and
/// the lists and strings Callable and forward references use. Nothing in it is called.
bool isTypeExpression(const TreeRef& tree)
{
    using namespace torch::jit;
    switch (tree->kind()) {
    case TK_VAR:
    case TK_NONE:
    case TK_NONE_TYPE:
    case TK_STRINGLITERAL:
        return true;
    case '.':
        return !dottedName(tree).empty();
    case TK_SUBSCRIPT:
        return isTypeExpression(tree->trees()[0]) && allLiteral(tree->trees()[1], isTypeExpression);
    case TK_TUPLE_LITERAL:
    case TK_LIST_LITERAL:
        return allLiteral(tree->trees()[0], isTypeExpression);
    default:
        return false;
    }
}

class SourceJudge {
public:
    SourceJudge(std::shared_ptr<torch::jit::Source> source, std::string_view name, ArchiveCode code)
        : m_source(std::move(source)), m_name(name), m_code(code)
    {
    }

    Status function(const torch::jit::Def& def)
    {
        if (m_code == ArchiveCode::None)
            return refuse(def.range(), "defines the function '" + def.name().name() + "', where a checkpoint's own "
                                       "archive holds weights only: it was not written by d2dpo");
        const torch::jit::Decl decl = def.decl();
        for (const torch::jit::Param& param : decl.params()) {
            if (param.type().present() && !isTypeExpression(param.type().get()))
                return refuse(param.range(), "gives the parameter '" + param.ident().name() +
                                                 "' a type that is not a plain type name");
            if (param.defaultValue().present() && !isLiteral(param.defaultValue().get()))
                return refuse(param.range(),
                              "gives the parameter '" + param.ident().name() +
                                  "' a default value that is computed; LibTorch computes defaults while it loads the "
                                  "archive, before the op allowlist is asked, so only a literal value is accepted");
        }
        if (decl.return_type().present() && !isTypeExpression(decl.return_type().get()))
            return refuse(decl.range(), "gives the function '" + def.name().name() + "' a return type that is not a "
                                        "plain type name");
        return calls(def.statements().tree());
    }

    Status classBody(const torch::jit::ClassDef& cls)
    {
        using namespace torch::jit;
        for (const Stmt& statement : cls.body()) {
            if (statement.kind() == TK_DEF) {
                if (Status s = function(Def(statement)); !s)
                    return s;
                continue;
            }
            if (statement.kind() != TK_ASSIGN)
                return refuse(statement.range(), "holds a statement in the body of class '" + cls.name().name() +
                                                     "' other than an attribute, a constant or a method");
            const Assign assign(statement);
            if (assign.type().present() && !isTypeExpression(assign.type().get()))
                return refuse(assign.range(), "declares an attribute of class '" + cls.name().name() +
                                                  "' with a type that is not a plain type name");
            if (!assign.rhs().present())
                continue;
            const TreeRef value = assign.rhs().get();
            const bool annotation = assign.lhs().kind() == TK_SUBSCRIPT &&
                                    isVarNamed(assign.lhs().tree()->trees()[0], {"__annotations__"});
            if (annotation ? !isTypeExpression(value) : !isLiteral(value))
                return refuse(assign.range(),
                              "gives class '" + cls.name().name() +
                                  "' a value that is computed; LibTorch computes a class constant while it loads the "
                                  "archive, before the op allowlist is asked, so only a literal value is accepted");
        }
        return Ok{};
    }

    /// Every builtin called anywhere (`torch.x(...)`, `ops.ns.x(...)`) is on the op allowlist:
    /// constant folding runs such a call on literal inputs while the archive compiles.
    Status calls(const TreeRef& root)
    {
        std::vector<TreeRef> pending{root};
        while (!pending.empty()) {
            const TreeRef tree = pending.back();
            pending.pop_back();
            if (tree->kind() == torch::jit::TK_APPLY && !isLiteral(tree)) { // torch.device("cpu") is a value
                const std::vector<std::string> callee = dottedName(torch::jit::Apply(tree).callee());
                std::string op;
                if (callee.size() == 2 && callee[0] == "torch")
                    op = "aten::" + callee[1];
                else if (callee.size() == 3 && callee[0] == "ops")
                    op = callee[1] + "::" + callee[2];
                else if (callee.size() > 2 && callee[0] == "torch")
                    op = "torch." + callee[1] + "...";
                if (!op.empty() && !isAllowedScriptOperation(op))
                    return refuse(tree->range(), "calls " + excerpt(op, 120) + ", which is not on the op allowlist");
            }
            for (const TreeRef& child : tree->trees())
                pending.push_back(child);
        }
        return Ok{};
    }

    Status refuse(const torch::jit::SourceRange& where, const std::string& what) const
    {
        const size_t line = m_source->lineno_for_offset(where.start()) + 1;
        return makeError("its code (" + excerpt(std::string(m_name), 120) + ", line " + std::to_string(line) + ") " +
                         what);
    }

private:
    std::shared_ptr<torch::jit::Source> m_source;
    std::string_view m_name;
    ArchiveCode m_code;
};

} // namespace

Status checkScriptSource(std::string_view source, std::string_view name, ArchiveCode code)
{
    using namespace torch::jit;
    if (bracketDepth(source) > kMaxBracketDepth)
        return makeError("its code (" + excerpt(std::string(name), 120) + ") nests brackets more than " +
                         std::to_string(kMaxBracketDepth) + " deep, which TorchScript never writes");
    auto text = std::make_shared<Source>(c10::string_view(source.data(), source.size()));
    SourceJudge judge(text, name, code);
    try {
        // Read the way LibTorch's importer reads a record: a version line, imports, then classes
        // and functions only.
        Parser parser(text);
        Lexer& lexer = parser.lexer();
        if (lexer.cur().kind == TK_IDENT && lexer.cur().text() == "op_version_set") {
            lexer.next();
            lexer.expect('=');
            lexer.expect(TK_NUMBER);
            lexer.expect(TK_NEWLINE);
        }
        while (lexer.cur().kind != TK_EOF) {
            while (lexer.nextIf(TK_IMPORT)) {
                while (lexer.cur().kind != TK_NEWLINE && lexer.cur().kind != TK_EOF)
                    lexer.next();
                lexer.expect(TK_NEWLINE);
            }
            Status judged = Ok{};
            if (lexer.cur().kind == TK_CLASS_DEF)
                judged = judge.classBody(ClassDef(parser.parseClass()));
            else if (lexer.cur().kind == TK_DEF)
                judged = judge.function(Def(parser.parseFunction(/*is_method=*/false)));
            else if (lexer.cur().kind != TK_EOF)
                return judge.refuse(lexer.cur().range, "holds a statement other than a class or a function");
            if (!judged)
                return judged;
        }
    } catch (const std::exception& e) {
        return makeError("its code (" + excerpt(std::string(name), 120) +
                         ") is not TorchScript as LibTorch reads it: " + excerpt(e.what(), 300));
    }
    return Ok{};
}

} // namespace d2dpo
