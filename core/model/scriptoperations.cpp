// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptoperations.h"

#include <algorithm>
#include <functional>
#include <array>
#include <unordered_set>

#include <sstream>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

namespace d2dpo {

namespace {

/// The structure of TorchScript code: constants, attributes, control flow, containers, calls
/// (whose targets are functions of the same archive, checked too), casts and tensor properties.
/// Left out: prim::Print, prim::fork and prim::Enter/Exit (with-statements), prim::PythonOp.
constexpr std::array kStructure = {"prim::Constant",
                                   "prim::GetAttr",
                                   "prim::SetAttr",
                                   "prim::If",
                                   "prim::Loop",
                                   "prim::ListConstruct",
                                   "prim::ListUnpack",
                                   "prim::TupleConstruct",
                                   "prim::TupleUnpack",
                                   "prim::TupleIndex",
                                   "prim::TupleSlice",
                                   "prim::DictConstruct",
                                   "prim::DictIndex",
                                   "prim::CallFunction",
                                   "prim::CallMethod",
                                   "prim::CreateObject",
                                   "prim::RaiseException",
                                   "prim::Uninitialized",
                                   "prim::unchecked_cast",
                                   "prim::unchecked_unwrap_optional",
                                   "prim::isinstance",
                                   "prim::device",
                                   "prim::dtype",
                                   "prim::layout",
                                   "prim::is_cuda",
                                   "prim::is_cpu",
                                   "prim::is_nested",
                                   "prim::is_sparse",
                                   "prim::is_quantized",
                                   "prim::is_mkldnn",
                                   "prim::is_meta",
                                   "prim::is_xpu",
                                   "prim::is_vulkan",
                                   "prim::is_ipu",
                                   "prim::is_mps",
                                   "prim::requires_grad",
                                   "prim::data",
                                   "prim::shape",
                                   "prim::name",
                                   "prim::index",
                                   "prim::min",
                                   "prim::max",
                                   "prim::abs",
                                   "prim::NumToTensor",
                                   "prim::ImplicitTensorToNum",
                                   "prim::StringIndex",
                                   "prim::EnumName",
                                   "prim::EnumValue",
                                   "prim::BroadcastSizes",
                                   "prim::ConstantChunk",
                                   "prim::AutogradZero",
                                   "prim::AutogradAdd",
                                   "prim::TypeCheck",
                                   "prim::Guard",
                                   "prim::BailOut",
                                   "prim::grad",
                                   "prim::id",
                                   "prim::rangelist",
                                   "prim::ListIndex"};

/// Tensor arithmetic, shapes, indexing, the layers of a transformer, and the scalar, list, dict
/// and string helpers TorchScript compiles Python's own operators to.
constexpr std::array kOperations = {
    // element-wise arithmetic and comparisons
    "abs", "abs_", "acos", "acosh", "add", "add_", "addcdiv", "addcmul", "asin", "asinh", "atan", "atan2", "atanh",
    "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "ceil", "clamp", "clamp_", "clamp_max", "clamp_min",
    "clamp_min_", "clamp_max_", "clip", "cos", "cosh", "div", "div_", "eq", "erf", "erfc", "erfinv", "exp", "exp_",
    "expm1", "floor", "floor_divide", "fmod", "frac", "ge", "gt", "isfinite", "isinf", "isnan", "le", "lerp", "log",
    "log10", "log1p", "log2", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "lt", "maximum",
    "minimum", "mul", "mul_", "nan_to_num", "ne", "neg", "pow", "pow_", "reciprocal", "remainder", "round", "rsqrt",
    "rsub", "sign", "sin", "sinh", "sqrt", "square", "sub", "sub_", "tan", "tanh", "trunc", "where", "xlogy",
    "true_divide",
    // activations and normalisation
    "celu", "dropout", "dropout_", "elu", "feature_dropout", "gelu", "gelu_", "glu", "hardsigmoid", "hardswish",
    "hardtanh", "leaky_relu", "log_sigmoid", "log_softmax", "mish", "prelu", "relu", "relu_", "relu6", "selu",
    "sigmoid", "sigmoid_", "silu", "silu_", "softmax", "softplus", "softsign", "tanh_", "threshold", "batch_norm",
    "group_norm", "instance_norm", "layer_norm", "rms_norm", "native_layer_norm", "normalize", "alpha_dropout",
    // linear algebra and layers
    "addmm", "addbmm", "baddbmm", "bilinear", "bmm", "conv1d", "conv2d", "conv_transpose1d", "_convolution",
    "convolution", "dot", "einsum", "embedding", "embedding_bag", "linear", "matmul", "mm", "mv", "outer",
    "scaled_dot_product_attention", "_native_multi_head_attention", "_transformer_encoder_layer_fwd", "_masked_softmax",
    "_nested_tensor_from_mask", "to_padded_tensor", "avg_pool1d", "max_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "one_hot", "pad", "constant_pad_nd", "cosine_similarity",
    "pairwise_distance", "cdist", "linalg_vector_norm", "norm", "frobenius_norm", "cross_entropy_loss", "nll_loss",
    "mse_loss",
    // reductions and scans
    "all", "amax", "amin", "any", "argmax", "argmin", "argsort", "count_nonzero", "cummax", "cumprod", "cumsum",
    "logcumsumexp", "logsumexp", "max", "mean", "median", "min", "prod", "sort", "std", "sum", "topk", "var",
    "var_mean", "std_mean", "kthvalue",
    // making tensors (in memory only)
    "arange", "empty", "empty_like", "eye", "full", "full_like", "linspace", "new_empty", "new_full", "new_ones",
    "new_zeros", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm",
    "scalar_tensor", "tensor", "zeros", "zeros_like", "bernoulli", "bernoulli_", "multinomial", "normal", "normal_",
    "uniform_", "fill_", "zero_", "copy_", "clone", "detach", "detach_", "polar", "complex", "triu_indices",
    "tril_indices", "as_tensor",
    // shapes, views and indexing
    "broadcast_tensors", "broadcast_to", "cat", "chunk", "concat", "concatenate", "contiguous", "diag", "diag_embed",
    "diagonal", "dim", "expand", "expand_as", "flatten", "flip", "gather", "hstack", "index", "index_add", "index_add_",
    "index_copy", "index_fill", "index_fill_", "index_put", "index_put_", "index_select", "masked_fill", "masked_fill_",
    "masked_scatter", "masked_select", "movedim", "moveaxis", "narrow", "nonzero", "numel", "permute", "repeat",
    "repeat_interleave", "reshape", "reshape_as", "roll", "scatter", "scatter_", "scatter_add", "scatter_add_",
    "scatter_reduce", "select", "size", "slice", "split", "split_with_sizes", "squeeze", "squeeze_", "stack", "stride",
    "swapaxes", "swapdims", "t", "take", "take_along_dim", "tensor_split", "tile", "transpose", "transpose_", "tril",
    "tril_", "triu", "triu_", "type_as", "unbind", "unflatten", "unsqueeze", "unsqueeze_", "view", "view_as", "vstack",
    "unique_consecutive", "_unique2", "clone", "alias", "masked_fill", "resolve_conj",
    "resolve_neg", "real", "imag", "view_as_real", "view_as_complex", "lift_fresh", "_shape_as_tensor", "sym_size",
    "sym_numel", "sym_stride", "_assert_async",
    // dtypes, devices and properties
    "to", "type", "is_floating_point", "is_complex", "is_grad_enabled", "is_autocast_enabled",
    "is_autocast_cpu_enabled", "requires_grad_", "element_size", "get_device", "item", "__is__", "__isnot__", "__not__",
    "__and__", "__or__", "__xor__", "__iand__", "__ior__", "__lshift__", "__rshift__", "__contains__", "__getitem__",
    "__round_to_zero_floordiv", "__range_length", "__derive_index", "__upsample", "__interpolate",
    // Python's scalars, strings, lists and dicts
    "Bool", "Int", "Float", "Complex", "ScalarImplicit", "IntImplicit", "FloatImplicit", "ComplexImplicit", "Scalar",
    "floordiv", "mathremainder", "sqrt", "exp", "log", "ceil", "floor", "gcd", "factorial", "isnan", "copysign", "len",
    "append", "extend", "insert", "pop", "remove", "clear", "reverse", "count", "list", "_set_item", "__setitem__",
    "dict", "keys", "values", "items", "get", "setdefault", "update", "copy", "str", "format", "join", "split", "strip",
    "lower", "upper", "startswith", "endswith", "find", "replace", "isdigit", "isalpha", "warn", "__getitem__", "slice",
    "min", "max", "sorted", "sort", "add", "mul", "eq", "ne", "lt", "gt", "le", "ge", "neg", "abs", "div", "remainder",
    "pow", "sum", "any", "all", "divmod", "degrees", "radians", "numel"};

const std::unordered_set<std::string_view>& allowed()
{
    static const std::unordered_set<std::string_view> names = [] {
        std::unordered_set<std::string_view> out(kStructure.begin(), kStructure.end());
        static std::vector<std::string> qualified; // kept alive: the set holds views of them
        qualified.reserve(kOperations.size());
        for (const char* op : kOperations)
            qualified.push_back(std::string("aten::") + op);
        for (const std::string& op : qualified)
            out.insert(op);
        return out;
    }();
    return names;
}

/// The TorchBind class (a C++ class registered with LibTorch, "__torch__.torch.classes.ns.Name")
/// that `type` is or holds, or "". Its methods are native code the op allowlist never sees.
std::string torchBindClassIn(const c10::TypePtr& type, int depth = 0)
{
    if (!type || depth > 8) // a class may hold itself; deeper nesting has nothing new to show
        return {};
    if (const auto cls = type->cast<c10::ClassType>())
        if (const auto& name = cls->name(); name && name->qualifiedName().rfind("__torch__.torch.classes.", 0) == 0)
            return name->qualifiedName().substr(10);
    for (const c10::TypePtr& inner : type->containedTypes())
        if (std::string found = torchBindClassIn(inner, depth + 1); !found.empty())
            return found;
    return {};
}

std::string torchBindClassOf(const torch::jit::Node* node)
{
    for (const torch::jit::Value* value : node->outputs())
        if (std::string found = torchBindClassIn(value->type()); !found.empty())
            return found;
    for (const torch::jit::Value* value : node->inputs())
        if (std::string found = torchBindClassIn(value->type()); !found.empty())
            return found;
    return {};
}

/// Whether a prim::unchecked_cast only narrows (Optional[T] to T, a union to a member, an
/// interface to its class), as TorchScript writes it after a refinement. Any other would hand an
/// op a value of another kind than it declares; LibTorch's accessors happen to check the kind
/// today, but nothing promises that every fast path does.
bool isNarrowingCast(const torch::jit::Node* node)
{
    if (node->kind() != c10::prim::unchecked_cast)
        return true;
    if (node->inputs().size() != 1 || node->outputs().size() != 1)
        return false;
    const c10::TypePtr& from = node->input()->type();
    const c10::TypePtr& to = node->output()->type();
    if (!to->isSubtypeOf(*from))
        return false;
    // Everything is a subtype of Any (and a class of the interfaces it meets): a cast from Any, a
    // union or an interface to a class would hand its slots to whatever the value is. A class or
    // interface may only come out of Optional[itself], whose None the interpreter refuses.
    const std::function<bool(const c10::TypePtr&)> holdsObjects = [&](const c10::TypePtr& type) {
        if (type->kind() == c10::TypeKind::ClassType || type->kind() == c10::TypeKind::InterfaceType)
            return true;
        for (const c10::TypePtr& inner : type->containedTypes())
            if (holdsObjects(inner))
                return true;
        return false;
    };
    if (!holdsObjects(to))
        return true;
    const auto* optional = from->castRaw<c10::OptionalType>();
    return optional && *optional->getElementType() == *to;
}

/// The first node of `block` (its nested blocks included) whose operation is not allowed, that
/// makes, takes or calls a TorchBind object, or that casts a value to an unrelated type.
const torch::jit::Node* firstRefused(const torch::jit::Block* block)
{
    for (const torch::jit::Node* node : block->nodes()) {
        if (!isAllowedScriptOperation(node->kind().toQualString()) || !torchBindClassOf(node).empty() ||
            !isNarrowingCast(node))
            return node;
        for (const torch::jit::Block* inner : node->blocks())
            if (const torch::jit::Node* refused = firstRefused(inner))
                return refused;
    }
    return nullptr;
}

/// The function's name as its archive spells it, without TorchScript's "__torch__." prefix.
std::string shownName(const torch::jit::Function& function)
{
    std::string name = function.qualname().qualifiedName();
    if (name.rfind("__torch__.", 0) == 0)
        name = name.substr(10);
    return name.size() > 120 ? name.substr(0, 120) + "..." : name;
}

/// The input LibTorch 1.13 divides by unchecked, where 0 ends the process with SIGFPE
/// (tst_allowedops): the fast-path attention ops' head count, and the divisor of the integer
/// remainder (`a % b`) and of __round_to_zero_floordiv. -1 for other nodes.
int headCountInput(const torch::jit::Node* node)
{
    static const c10::Symbol attention = c10::Symbol::fromQualString("aten::_native_multi_head_attention");
    static const c10::Symbol layer = c10::Symbol::fromQualString("aten::_transformer_encoder_layer_fwd");
    static const c10::Symbol remainder = c10::Symbol::fromQualString("aten::remainder");
    static const c10::Symbol roundToZero = c10::Symbol::fromQualString("aten::__round_to_zero_floordiv");
    if (node->kind() == attention)
        return 4;
    if (node->kind() == layer)
        return 2;
    if ((node->kind() == remainder || node->kind() == roundToZero) && node->inputs().size() == 2 &&
        node->input(0)->type()->kind() == c10::TypeKind::IntType &&
        node->input(1)->type()->kind() == c10::TypeKind::IntType)
        return 1;
    return -1;
}

/// Passes each such count or divisor through h * (h // h) first: the same, except that 0 raises
/// TorchScript's ZeroDivisionError before the op could divide by it. The graphs run as compiled
/// here (the optimising executor is off), so nothing folds the guard away.
void guardHeadCounts(torch::jit::Block* block)
{
    for (torch::jit::Node* node : block->nodes()) {
        for (torch::jit::Block* inner : node->blocks())
            guardHeadCounts(inner);
        const int input = headCountInput(node);
        if (input < 0 || size_t(input) >= node->inputs().size())
            continue;
        torch::jit::Graph& graph = *node->owningGraph();
        torch::jit::WithInsertPoint here(node);
        torch::jit::Value* heads = node->input(size_t(input));
        torch::jit::Value* one = graph.insert(c10::aten::floordiv, {heads, heads});
        node->replaceInput(size_t(input), graph.insert(c10::aten::mul, {heads, one}));
    }
}

} // namespace

void guardScriptGraph(torch::jit::Graph& graph) { guardHeadCounts(graph.block()); }

bool isAllowedScriptOperation(std::string_view kind) { return allowed().count(kind) > 0; }

Status checkScriptOperations(const torch::jit::Module& module)
{
    const auto unit = module._ivalue()->compilation_unit();
    if (!unit)
        return makeError("the module has no compiled code to check");
    for (torch::jit::Function* function : unit->get_functions()) {
        if (!function->isGraphFunction())
            return makeError("its code calls a function '" + shownName(*function) +
                             "' that is not TorchScript (a native builtin): it is never run");
        const auto graph = torch::jit::toGraphFunction(*function).graph();
        if (const torch::jit::Node* refused = firstRefused(graph->block())) {
            if (const std::string bound = torchBindClassOf(refused); !bound.empty())
                return makeError("its code uses the TorchBind class " + bound.substr(0, 80) + " (in " +
                                 shownName(*function) + "): a class built into LibTorch whose methods are native "
                                 "code outside the op allowlist; a denoiser needs none, so the model is never run");
            if (!isNarrowingCast(refused))
                return makeError("its code casts a " + refused->input()->type()->repr_str().substr(0, 60) + " to a " +
                                 refused->output()->type()->repr_str().substr(0, 60) + " without a check (in " +
                                 shownName(*function) + "): TorchScript only narrows a value it has tested, so an "
                                 "edited archive wrote this; the model is never run");
            const std::string kind = refused->kind().toQualString();
            const bool aten = kind.rfind("aten::", 0) == 0 || kind.rfind("prim::", 0) == 0;
            return makeError("its code uses " + kind.substr(0, 80) + " (in " + shownName(*function) + "), " +
                             (aten ? std::string("which is not among the tensor operations a denoiser needs")
                                   : std::string("an operation from outside PyTorch's own (a custom op)")) +
                             ". A model runs as whoever opens it, so one that could read or write files, start "
                             "processes or reach the network is never run; remove the call and save it again");
        }
    }
    for (torch::jit::Function* function : unit->get_functions())
        guardHeadCounts(torch::jit::toGraphFunction(*function).graph()->block());
    return Ok{};
}

} // namespace d2dpo
