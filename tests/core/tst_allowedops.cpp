// SPDX-License-Identifier: GPL-3.0-or-later
// The op allowlist (model/scriptoperations.cpp) lets a model someone else wrote call these ops
// with arguments of its choosing. An op is on it only if LibTorch 1.13 checks its arguments: an
// index, an offset, a class or a size out of range must raise an error, never read or write past a
// tensor. Each allowed indexing op is called here with out-of-range arguments drawn from the values
// that break unchecked code (the size, one past it, minus the size minus one, 2^40, the extremes of
// int64). A missing check shows as a crash of this suite or as a call that returns.
#include <QtTest/QtTest>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include <torch/torch.h>

#include "model/scriptoperations.h"

namespace {

using Call = std::function<void(int64_t bad)>;

bool refuses(const Call& call, int64_t bad)
{
    try {
        call(bad);
    } catch (const c10::Error&) {
        return true;
    } catch (const std::exception&) {
        return true;
    }
    return false;
}

/// Out-of-range values for an index into `size` elements, in a seeded random order.
std::vector<int64_t> badIndices(int64_t size, uint32_t seed)
{
    std::vector<int64_t> out{size,
                             size + 1,
                             -size - 1,
                             int64_t(1) << 40,
                             -(int64_t(1) << 40),
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min() + 1};
    std::mt19937 random(seed);
    std::uniform_int_distribution<int64_t> far(size + 2, int64_t(1) << 50);
    for (int i = 0; i < 8; ++i)
        out.push_back(i % 2 ? far(random) : -far(random));
    std::shuffle(out.begin(), out.end(), random);
    return out;
}

torch::Tensor longs(std::initializer_list<int64_t> values)
{
    return torch::tensor(std::vector<int64_t>(values), torch::kLong);
}

} // namespace

class TestAllowedOps final : public QObject {
    Q_OBJECT

    const int64_t n = 16;
    torch::Tensor x = torch::arange(16, torch::kFloat).reshape({4, 4});
    torch::Tensor v = torch::arange(16, torch::kFloat);

    void expectRefused(const char* op, const Call& call, const std::vector<int64_t>& values)
    {
        QVERIFY2(d2dpo::isAllowedScriptOperation(std::string("aten::") + op),
                 qPrintable(QString("%1 is not on the allowlist: test it where it is").arg(op)));
        for (const int64_t bad : values)
            QVERIFY2(refuses(call, bad), qPrintable(QString("aten::%1 took %2 without an error").arg(op).arg(bad)));
    }
    void expectRefused(const char* op, const Call& call, int64_t size)
    {
        expectRefused(op, call, badIndices(size, uint32_t(std::hash<std::string>()(op))));
    }

private Q_SLOTS:
    void opsLibTorchDoesNotCheckAreNotAllowed()
    {
        // searchsorted's sorter and bucketize (the same code) read wherever the sorter points; an
        // op is never allowed because its common use is harmless.
        for (const char* op : {"aten::searchsorted", "aten::bucketize", "aten::from_file", "aten::save",
                               "aten::as_strided", "aten::set_", "aten::_pad_packed_sequence", "aten::histc",
                               "aten::bincount", "prim::Print", "prim::fork"})
            QVERIFY2(!d2dpo::isAllowedScriptOperation(op), op);
        QVERIFY(d2dpo::isAllowedScriptOperation("aten::gather"));
    }

    void indexingOpsRefuseIndicesOutOfRange()
    {
        expectRefused("gather", [&](int64_t b) { torch::gather(x, 1, longs({0, b}).view({1, 2})); }, 4);
        expectRefused("index_select", [&](int64_t b) { torch::index_select(v, 0, longs({b})); }, n);
        expectRefused("index", [&](int64_t b) { v.index({longs({1, b})}); }, n);
        expectRefused("index_put_", [&](int64_t b) { v.clone().index_put_({longs({b})}, torch::ones({1})); }, n);
        expectRefused("index_put", [&](int64_t b) { v.index_put({longs({b})}, torch::ones({1}), true); }, n);
        expectRefused("index_add", [&](int64_t b) { v.index_add(0, longs({b}), torch::ones({1})); }, n);
        expectRefused("index_copy", [&](int64_t b) { v.index_copy(0, longs({b}), torch::ones({1})); }, n);
        expectRefused("index_fill", [&](int64_t b) { v.index_fill(0, longs({b}), 1.0); }, n);
        expectRefused("scatter", [&](int64_t b) { v.scatter(0, longs({b}), torch::ones({1})); }, n);
        expectRefused("scatter_add", [&](int64_t b) { v.scatter_add(0, longs({b}), torch::ones({1})); }, n);
        expectRefused("scatter_reduce",
                      [&](int64_t b) { v.scatter_reduce(0, longs({b}), torch::ones({1}), "sum"); }, n);
        expectRefused("take", [&](int64_t b) { torch::take(x, longs({b})); }, n);
        expectRefused("take_along_dim", [&](int64_t b) { torch::take_along_dim(x, longs({b}).view({1, 1}), 1); }, 4);
        expectRefused("embedding", [&](int64_t b) { torch::embedding(x, longs({0, b})); }, 4);
        expectRefused("embedding_bag",
                      [&](int64_t b) { torch::embedding_bag(x, longs({0, b}), longs({0}), false, 0, false, {}, false); },
                      4);
        expectRefused("embedding_bag", // an offset past the indices
                      [&](int64_t b) {
                          torch::embedding_bag(x, longs({0, 1, 2}), longs({0, b}), false, 0, false, {}, false);
                      },
                      4);
        expectRefused("one_hot", [&](int64_t b) { torch::one_hot(longs({b}), 4); }, 4);
        expectRefused("nll_loss", [&](int64_t b) { torch::nll_loss(x, longs({0, 1, 2, b})); }, 4);
        expectRefused("cross_entropy_loss",
                      [&](int64_t b) { torch::nn::functional::cross_entropy(x, longs({0, 1, 2, b})); }, 4);
    }

    void positionsAndDimensionsOutOfRangeAreRefused()
    {
        expectRefused("select", [&](int64_t b) { v.select(0, b); }, n);
        expectRefused("narrow", [&](int64_t b) { v.narrow(0, b, 1); }, n);
        expectRefused("narrow", [&](int64_t b) { v.narrow(0, 0, b); }, n + 1);
        expectRefused("size", [&](int64_t b) { (void)x.size(b); }, 2);
        expectRefused("sum", [&](int64_t b) { x.sum(b); }, 2);
        expectRefused("cumsum", [&](int64_t b) { x.cumsum(b); }, 2);
        expectRefused("transpose", [&](int64_t b) { x.transpose(0, b); }, 2);
        expectRefused("unsqueeze", [&](int64_t b) { x.unsqueeze(b); }, 3);
        expectRefused("topk", [&](int64_t b) { v.topk(b); }, n + 1);
        expectRefused("kthvalue", [&](int64_t b) { v.kthvalue(b); }, n + 1);
        expectRefused("diagonal", [&](int64_t b) { x.diagonal(0, 0, b); }, 2);
        expectRefused("movedim", [&](int64_t b) { x.movedim(0, b); }, 2);
        expectRefused("chunk", [&](int64_t b) { x.chunk(2, b); }, 2);
        expectRefused("split", [&](int64_t b) { x.split(1, b); }, 2);
        expectRefused("flatten", [&](int64_t b) { x.flatten(0, b); }, 2);
        expectRefused("roll", [&](int64_t b) { x.roll({1}, {b}); }, 2);
        expectRefused("flip", [&](int64_t b) { x.flip({b}); }, 2);
        // nn.TransformerEncoder's fast path, compiled into every scripted encoder.
        expectRefused("_masked_softmax",
                      [&](int64_t b) { at::_masked_softmax(x, torch::zeros({4, 4}, torch::kBool), b); }, 2);
        expectRefused("_masked_softmax", // a mask of another shape
                      [&](int64_t b) {
                          at::_masked_softmax(x, torch::zeros({std::max<int64_t>(1, b & 7) + 4, 4}, torch::kBool), 1);
                      },
                      4);
    }

    void sizesOutOfRangeAreRefused()
    {
        // A count or a shape the op cannot honour: never an allocation of what wrapped around.
        // Shapes of the wrong size, and sizes whose product wraps around int64.
        const std::vector<int64_t> wrongSizes{0, 1, 3, -2, int64_t(1) << 40, -(int64_t(1) << 40),
                                              std::numeric_limits<int64_t>::max(),
                                              std::numeric_limits<int64_t>::min() + 1, (int64_t(1) << 62) + 8};
        expectRefused("view", [&](int64_t b) { v.view({b, 2}); }, wrongSizes);
        expectRefused("reshape", [&](int64_t b) { v.reshape({b, 2}); }, wrongSizes);
        expectRefused("unflatten", [&](int64_t b) { v.unflatten(0, {b, 2}); }, wrongSizes);
        expectRefused("expand", [&](int64_t b) { v.expand({2, b}); }, wrongSizes);
        const std::vector<int64_t> negative{-1, -2, -(int64_t(1) << 40), std::numeric_limits<int64_t>::min() + 1};
        expectRefused("repeat_interleave",
                      [&](int64_t b) { v.repeat_interleave(longs({b}).expand({n}).contiguous()); }, negative);
        expectRefused("multinomial", [&](int64_t b) { torch::multinomial(v + 1, b); }, n + 1);
        expectRefused("triu_indices", [&](int64_t b) { torch::triu_indices(4, 4, 0, torch::kLong).select(1, b); }, 10);
    }

    void fastPathOpsRefuseShapesThatDoNotFit()
    {
        // nn.TransformerEncoder's fast path (kept so that scripted encoders load): the widths,
        // head counts, weights and masks a hostile model passes must be checked against the
        // tensors, never trusted as the sizes of a loop over them.
        const int64_t e = 8, b = 2, l = 5;
        const auto q = torch::randn({b, l, e});
        const auto w = torch::randn({3 * e, e}), bias = torch::randn({3 * e}), pw = torch::randn({e, e}),
                   pb = torch::randn({e});
        const auto attention = [&](int64_t width, int64_t heads, const torch::Tensor& qkv,
                                   const c10::optional<torch::Tensor>& mask) {
            at::_native_multi_head_attention(q, q, q, width, heads, qkv, bias, pw, pb, mask);
        };
        attention(e, 2, w, c10::nullopt); // the shapes that fit run
        const std::vector<int64_t> wrongWidths{0, 4, 9, 16, -8, int64_t(1) << 40, std::numeric_limits<int64_t>::max()};
        expectRefused("_native_multi_head_attention", [&](int64_t width) { attention(width, 2, w, c10::nullopt); }, wrongWidths);
        // 0 heads is left to the next case: LibTorch 1.13 divides by it unchecked (SIGFPE).
        const std::vector<int64_t> wrongHeads{-1, 3, 16, int64_t(1) << 40, std::numeric_limits<int64_t>::min() + 1};
        expectRefused("_native_multi_head_attention", [&](int64_t heads) { attention(e, heads, w, c10::nullopt); }, wrongHeads);
        expectRefused("_native_multi_head_attention", // qkv weights of fewer rows than 3 widths
                      [&](int64_t rows) { attention(e, 2, torch::randn({rows, e}), c10::nullopt); }, std::vector<int64_t>{1, 8, 23});
        expectRefused("_native_multi_head_attention", // a mask of another shape
                      [&](int64_t len) { attention(e, 2, w, torch::zeros({b, len}, torch::kBool)); },
                      std::vector<int64_t>{1, 4, 6, 64});

        const auto n1 = torch::ones({e}), z1 = torch::zeros({e});
        const auto f1 = torch::randn({4 * e, e}), fb1 = torch::randn({4 * e}), f2 = torch::randn({e, 4 * e});
        const auto layer = [&](int64_t width, int64_t heads, const torch::Tensor& ffn2,
                               const c10::optional<torch::Tensor>& mask) {
            at::_transformer_encoder_layer_fwd(q, width, heads, w, bias, pw, pb, false, false, 1e-5, n1, z1, n1, z1, f1,
                                               fb1, ffn2, z1, mask);
        };
        layer(e, 2, f2, c10::nullopt);
        expectRefused("_transformer_encoder_layer_fwd", [&](int64_t width) { layer(width, 2, f2, c10::nullopt); }, wrongWidths);
        expectRefused("_transformer_encoder_layer_fwd", [&](int64_t heads) { layer(e, heads, f2, c10::nullopt); }, wrongHeads);
        expectRefused("_transformer_encoder_layer_fwd", // a second feed-forward weight of the wrong width
                      [&](int64_t cols) { layer(e, 2, torch::randn({e, cols}), c10::nullopt); }, std::vector<int64_t>{1, 31, 33});
        expectRefused("_transformer_encoder_layer_fwd",
                      [&](int64_t len) { layer(e, 2, f2, torch::zeros({b, len}, torch::kBool)); },
                      std::vector<int64_t>{1, 4, 6, 64});

        const auto padded = torch::randn({b, l, e});
        at::_nested_tensor_from_mask(padded, torch::ones({b, l}, torch::kBool));
        expectRefused("_nested_tensor_from_mask", // a mask of another shape, or one that is not left-aligned
                      [&](int64_t len) { at::_nested_tensor_from_mask(padded, torch::ones({b, len}, torch::kBool)); },
                      std::vector<int64_t>{1, 4, 6, 64});
        expectRefused("_nested_tensor_from_mask",
                      [&](int64_t) {
                          auto mask = torch::ones({b, l}, torch::kBool);
                          mask[0][0] = false;
                          at::_nested_tensor_from_mask(padded, mask, true);
                      },
                      std::vector<int64_t>{0});
    }

    void aHeadCountOfZeroRaisesInsteadOfDividing()
    {
        // Called directly, both fast-path ops divide by the head count unchecked: 0 ends the
        // process. In a model's graphs the count is guarded (guardScriptGraph, as every archive's
        // functions are once checked): 0 raises TorchScript's ZeroDivisionError, others pass alike.
        torch::jit::setGraphExecutorOptimize(false); // as a loaded model runs
        const auto unit = torch::jit::compile(R"(
def attention(q: Tensor, heads: int, w: Tensor, b: Tensor, pw: Tensor, pb: Tensor):
    return torch._native_multi_head_attention(q, q, q, 8, heads, w, b, pw, pb)[0]

def layer(q: Tensor, heads: int, w: Tensor, b: Tensor, pw: Tensor, pb: Tensor, n: Tensor, z: Tensor, f1: Tensor,
          fb: Tensor, f2: Tensor):
    return torch._transformer_encoder_layer_fwd(q, 8, heads, w, b, pw, pb, False, False, 1e-5, n, z, n, z, f1, fb,
                                                f2, z)
)");
        const int64_t e = 8;
        const auto q = torch::randn({2, 5, e}), w = torch::randn({3 * e, e}), b = torch::randn({3 * e}),
                   pw = torch::randn({e, e}), pb = torch::randn({e});
        const auto n = torch::ones({e}), z = torch::zeros({e}), f1 = torch::randn({4 * e, e}),
                   fb = torch::randn({4 * e}), f2 = torch::randn({e, 4 * e});
        for (const char* name : {"attention", "layer"}) {
            torch::jit::Function& function = unit->get_function(name);
            d2dpo::guardScriptGraph(*torch::jit::toGraphFunction(function).graph());
            const auto call = [&](int64_t heads) {
                std::vector<c10::IValue> inputs{q, heads, w, b, pw, pb};
                if (std::string(name) == "layer")
                    inputs.insert(inputs.end(), {n, z, f1, fb, f2});
                return function(inputs).toTensor();
            };
            QCOMPARE(call(2).sizes(), q.sizes()); // a count that fits runs as before
            QVERIFY2(refuses([&](int64_t heads) { call(heads); }, 0), name);
            QVERIFY2(refuses([&](int64_t heads) { call(heads); }, 3), name);
        }
    }

    void anIntegerRemainderByZeroRaisesInsteadOfDividing()
    {
        // `a % b` on ints (aten::remainder.int) divides unchecked in LibTorch 1.13: SIGFPE. The
        // guard makes b = 0 raise; other divisors give the remainder as before.
        torch::jit::setGraphExecutorOptimize(false);
        const auto unit = torch::jit::compile(R"(
def remainder(a: int, b: int) -> int:
    return a % b
)");
        torch::jit::Function& function = unit->get_function("remainder");
        d2dpo::guardScriptGraph(*torch::jit::toGraphFunction(function).graph());
        QCOMPARE(function({int64_t(7), int64_t(3)}).toInt(), int64_t(1));
        QCOMPARE(function({int64_t(-7), int64_t(3)}).toInt(), int64_t(2)); // Python's sign rule, unchanged
        QVERIFY(refuses([&](int64_t b) { function({int64_t(7), b}); }, 0));
    }
};

QTEST_APPLESS_MAIN(TestAllowedOps)
#include "tst_allowedops.moc"
