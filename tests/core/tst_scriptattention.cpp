// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's attention run by d2dpo's fused kernel (model/scriptattention.h): each
// spelling of softmax(q k^T * c) v the rewrite knows is found inside the model's blocks and
// computes what the model's own code computes (logits and every weight's gradient, float and
// double, training and sampling); a spelling the kernel cannot compute exactly (a softmax over the
// queries) runs as written; an expression the rewrite must not touch (scaled by a tensor, its
// probabilities read elsewhere) is left alone; the model's own code, which export writes, is
// unchanged.
#include <cstdlib>

#include <torch/script.h>

#include "support/testsupport.h"

#include "base/modelvocabulary.h"
#include "model/scriptattention.h"
#include "model/torchscriptdenoiser.h"

using namespace d2dpo;
using test::maxAbsDiff;

namespace {

constexpr int64_t kLength = 10;

/// A block: x [B, N, d] -> x + attention(x) W_out, with q, k and v [B, H, N, W] of the
/// projection, and `attention` the expression under test (it may use b, n, h, w, q, k and v).
torch::jit::Module block(const std::string& name, int64_t d, int64_t heads, const std::string& attention)
{
    torch::jit::Module m("__torch__." + name);
    m.register_parameter("wqkv", torch::randn({3 * d, d}) / std::sqrt(double(d)), false);
    m.register_parameter("wout", torch::randn({d, d}) / std::sqrt(double(d)), false);
    m.register_buffer("temperature", torch::full({}, 4.0));
    m.register_attribute("heads", c10::IntType::get(), heads);
    m.define("def forward(self, x: Tensor) -> Tensor:\n"
             "    b, n, d = x.shape[0], x.shape[1], x.shape[2]\n"
             "    h = self.heads\n"
             "    w = d // h\n"
             "    qkv = torch.matmul(x, self.wqkv.t()).view(b, n, 3, h, w).permute(2, 0, 3, 1, 4)\n"
             "    q, k, v = qkv[0], qkv[1], qkv[2]\n"
             "    a = " +
             attention +
             "\n"
             "    return x + torch.matmul(a.transpose(1, 2).reshape(b, n, d), self.wout.t())\n");
    return m;
}

/// A denoiser over ids 0, 1 and the mask 2 with two such blocks, wrapped once more (as
/// python/d2dpo_wrap.py wraps a model: the rewrite has to look two calls down), as a TorchScript
/// archive.
std::string modelArchive(int64_t d, int64_t heads, const std::string& attention)
{
    torch::manual_seed(11);
    torch::jit::Module m("__torch__.TwoBlocks");
    m.register_parameter("embed", torch::randn({3, d}), false);
    m.register_parameter("head", torch::randn({3, d}) / std::sqrt(double(d)), false);
    m.register_module("first", block("First", d, heads, attention));
    m.register_module("second", block("Second", d, heads, attention));
    m.define("def forward(self, tokens: Tensor, t: Tensor) -> Tensor:\n"
             "    x = self.embed[tokens] + t[:, None, None]\n"
             "    return torch.matmul(self.second.forward(self.first.forward(x)), self.head.t())\n");
    torch::jit::Module wrapper("__torch__.Wrapper");
    wrapper.register_module("inner", m);
    wrapper.define("def forward(self, tokens: Tensor, t: Tensor) -> Tensor:\n"
                   "    return self.inner.forward(tokens, t * 1.0)\n");
    std::ostringstream archive;
    wrapper.save(archive);
    return archive.str();
}

std::shared_ptr<TorchScriptDenoiser> load(const std::string& archive, bool plain)
{
    if (plain)
        setenv("D2DPO_SCRIPT_ATTENTION", "plain", 1);
    auto vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}");
    auto loaded = TorchScriptDenoiser::load(archive, vocabulary.value(), kLength);
    unsetenv("D2DPO_SCRIPT_ATTENTION");
    if (!loaded)
        qFatal("%s", loaded.error().c_str());
    return loaded.value();
}

/// The logits and each parameter's gradient of sum(logits * upstream).
std::vector<torch::Tensor> logitsAndGradients(TorchScriptDenoiser& model, const torch::Tensor& tokens,
                                              const torch::Tensor& t, const torch::Tensor& upstream)
{
    for (auto& p : model.parameters())
        p.mutable_grad() = torch::Tensor();
    const auto logits = model.forward(tokens, t);
    (logits * upstream.to(logits.scalar_type())).sum().backward();
    std::vector<torch::Tensor> out{logits.detach()};
    for (const auto& p : model.parameters())
        out.push_back(p.grad().clone());
    return out;
}

} // namespace

class TestScriptAttention : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachSpellingComputesWhatTheModelsCodeDoes_data()
    {
        QTest::addColumn<QString>("attention");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("rewritten");
        const int both = 2; // one expression in each block
        QTest::newRow("divided by the root of the width (ESM2, DiT)")
            << "torch.softmax(q @ k.transpose(-2, -1) / (float(w) ** 0.5), -1) @ v" << 2 << both;
        QTest::newRow("multiplied, transpose(-1, -2), dim=-1")
            << "torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.125, dim=-1) @ v" << 4 << both;
        QTest::newRow("divided by an int") << "torch.softmax(q @ k.transpose(-2, -1) / 4, -1) @ v" << 2 << both;
        QTest::newRow("q scaled beforehand, positive dims")
            << "torch.softmax((q * 0.25) @ k.transpose(2, 3), 3) @ v" << 2 << both;
        // Found, and run as written where the kernel is slower than LibTorch's products (heads of 12).
        QTest::newRow("heads 12 wide: as written")
            << "torch.softmax(q @ k.transpose(-2, -1) / (float(w) ** 0.5), -1) @ v" << 3 << both;
        QTest::newRow("heads 24 wide (ESM2-35M)")
            << "torch.softmax(q @ k.transpose(-2, -1) / (float(w) ** 0.5), -1) @ v" << 1 << both;
        QTest::newRow("[B * H, N, W] groups")
            << "torch.softmax(torch.matmul(q.reshape(b * h, n, w), k.reshape(b * h, n, w).transpose(1, 2)) / 4.0, "
               "-1).matmul(v.reshape(b * h, n, w)).view(b, h, n, w)"
            << 2 << both;
        // The result viewed as the model's code may view matmul's (contiguous) result.
        QTest::newRow("its result viewed")
            << "(torch.softmax(q @ k.transpose(-2, -1) / 4.0, -1) @ v).view(b * h, n, w).view(b, h, n, w)" << 2 << both;
        // Found, but not the kernel's arithmetic: runs as written.
        QTest::newRow("a softmax over the queries")
            << "torch.softmax(q @ k.transpose(-2, -1) / 4.0, -2) @ v" << 2 << both;
        // Not to be touched.
        QTest::newRow("divided by a tensor")
            << "torch.softmax(q @ k.transpose(-2, -1) / self.temperature, -1) @ v" << 2 << 0;
        // The op would run where its inputs are made: not when they are written to before the
        // expression, nor when the expression is inside a branch they are made outside of.
        QTest::newRow("v written to in place before")
            << "q\n    v.mul_(2.0)\n    a = torch.softmax(q @ k.transpose(-2, -1) / 4.0, -1) @ v" << 2 << 0;
        QTest::newRow("inside a branch")
            << "q\n    if bool(x.sum() < 1e9):\n        a = torch.softmax(q @ k.transpose(-2, -1) / 4.0, -1) @ v" << 2
            << 0;
        QTest::newRow("probabilities read elsewhere too")
            << "torch.softmax(q @ k.transpose(-2, -1) / 4.0, -1)\n    a = a @ v + a.mean()" << 2 << 0;
    }

    void eachSpellingComputesWhatTheModelsCodeDoes()
    {
        QFETCH(QString, attention);
        QFETCH(int, heads);
        QFETCH(int, rewritten);
        const int64_t d = heads == 3 ? 36 : heads == 1 ? 24 : 32;
        const std::string archive = modelArchive(d, heads, attention.toStdString());
        auto fused = load(archive, false);
        auto plain = load(archive, true);
        QCOMPARE(fused->fusedAttention(), int64_t(rewritten));
        QCOMPARE(plain->fusedAttention(), int64_t(0));

        torch::manual_seed(5);
        const auto tokens = torch::randint(0, 3, {4, kLength}, torch::kLong);
        const auto t = torch::rand({4});
        const auto upstream = torch::randn({4, kLength, 2});
        for (const auto dtype : {torch::kFloat, torch::kDouble}) {
            fused->to(dtype);
            plain->to(dtype);
            const double tolerance = dtype == torch::kFloat ? 2e-5 : 1e-11;
            const auto ours = logitsAndGradients(*fused, tokens, t, upstream);
            const auto theirs = logitsAndGradients(*plain, tokens, t, upstream);
            for (size_t i = 0; i < ours.size(); ++i) {
                const double gap = maxAbsDiff(ours[i], theirs[i]) / (1.0 + theirs[i].abs().max().item<double>());
                QVERIFY2(gap <= tolerance, qPrintable(QStringLiteral("tensor %1: %2").arg(i).arg(gap)));
            }
            // Sampling's forwards: no gradient, inference mode.
            c10::InferenceMode inference;
            QVERIFY(maxAbsDiff(fused->forward(tokens, t), plain->forward(tokens, t)) <= tolerance * 10);
        }
    }

    void theModelsOwnCodeIsWhatIsExported()
    {
        const std::string archive =
            modelArchive(32, 2, "torch.softmax(q @ k.transpose(-2, -1) / (float(w) ** 0.5), -1) @ v");
        auto fused = load(archive, false);
        QCOMPARE(fused->fusedAttention(), int64_t(2));
        const std::string exported = fused->archive();
        QVERIFY(exported.find("d2dpo") == std::string::npos);
        auto again = load(exported, false); // and the operation check passes it again
        QCOMPARE(again->fusedAttention(), int64_t(2));
        // A copy (the frozen reference) runs the fused forward too.
        auto copy = std::dynamic_pointer_cast<TorchScriptDenoiser>(fused->deepCopy());
        QVERIFY(copy);
        QCOMPARE(copy->fusedAttention(), int64_t(2));
        const auto tokens = torch::randint(0, 3, {2, kLength}, torch::kLong);
        const auto t = torch::rand({2});
        torch::NoGradGuard noGrad;
        QVERIFY(maxAbsDiff(copy->forward(tokens, t), fused->forward(tokens, t)) == 0.0);
    }

    void theOperationWithoutTheKernelIsTheExpression()
    {
        // Keys of another length (cross-attention) and a dtype argument: as written.
        torch::manual_seed(3);
        const auto q = torch::randn({2, 3, 5, 8}), k = torch::randn({2, 3, 7, 8}), v = torch::randn({2, 3, 7, 8});
        const auto expected = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / 2.0, -1), v);
        QVERIFY(maxAbsDiff(scriptAttention(q, k, v, -2, -1, 2.0, true, -1, std::nullopt), expected) < 1e-6);
        const auto typed = scriptAttention(q, k, v, -2, -1, 0.5, false, -1, torch::kFloat);
        QVERIFY(maxAbsDiff(typed, expected) < 1e-6);
        // A division by zero gives what the expression gives.
        const auto same = torch::randn({1, 2, 4, 8});
        const auto byZero = scriptAttention(same, same, same, -2, -1, 0, true, -1, std::nullopt);
        const auto asWritten = torch::matmul(torch::softmax(torch::matmul(same, same.transpose(-2, -1)) / 0, -1), same);
        QVERIFY(torch::equal(byZero.isnan(), asWritten.isnan()));
    }
};

QTEST_GUILESS_MAIN(TestScriptAttention)
#include "tst_scriptattention.moc"
