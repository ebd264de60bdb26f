// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's linear layers through oneDNN's sgemm (kernels/onednnlinear.h,
// model/scriptlinear.h): the operation gives torch::linear's value and the gradients of its input,
// weight and bias (3-D and non-contiguous inputs, no bias, a frozen weight; other dtypes take
// torch::linear itself); in a model every aten::linear is routed, inside its blocks too, and the
// logits and every weight's gradient are LibTorch's own to rounding; the model's own code is what
// export writes.
#include <cstdlib>
#include <dlfcn.h>

#include <torch/script.h>

#include "support/testsupport.h"

#include "base/modelvocabulary.h"
#include "kernels/onednnlinear.h"
#include "model/torchscriptdenoiser.h"

using namespace d2dpo;
using test::maxAbsDiff;

namespace {

constexpr int64_t kLength = 10;

/// A denoiser over ids 0, 1 and the mask 2: an embedding, a feed-forward block of two linear
/// layers (the second without bias) and a linear head, one of them inside an `if`; as an archive.
std::string modelArchive()
{
    torch::manual_seed(11);
    torch::jit::Module m("__torch__.Mlp");
    m.register_parameter("embed", torch::randn({3, 24}), false);
    m.register_parameter("w1", torch::randn({48, 24}) / 5.0, false);
    m.register_parameter("b1", torch::randn({48}), false);
    m.register_parameter("w2", torch::randn({24, 48}) / 7.0, false);
    m.register_parameter("head", torch::randn({3, 24}) / 5.0, false);
    m.register_parameter("headBias", torch::randn({3}), false);
    m.define("def forward(self, tokens: Tensor, t: Tensor) -> Tensor:\n"
             "    x = self.embed[tokens] + t[:, None, None]\n"
             "    h = torch.gelu(torch.linear(x, self.w1, self.b1))\n"
             "    x = x + torch.linear(h, self.w2)\n"
             "    if bool(t.sum() >= 0.0):\n"
             "        out = torch.linear(x, self.head, self.headBias)\n"
             "    else:\n"
             "        out = torch.linear(x * 2.0, self.head, self.headBias)\n"
             "    return out\n");
    std::ostringstream archive;
    m.save(archive);
    return archive.str();
}

std::shared_ptr<TorchScriptDenoiser> load(const std::string& archive, bool plain)
{
    if (plain)
        setenv("D2DPO_SCRIPT_LINEAR", "plain", 1);
    auto vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}");
    auto loaded = TorchScriptDenoiser::load(archive, vocabulary.value(), kLength);
    unsetenv("D2DPO_SCRIPT_LINEAR");
    if (!loaded)
        qFatal("%s", loaded.error().c_str());
    return loaded.value();
}

/// The value and the gradients of sum(f(x, w, b) * upstream) in x, w and b.
std::vector<torch::Tensor>
valueAndGradients(const std::function<torch::Tensor(torch::Tensor, torch::Tensor, torch::Tensor)>& f,
                  const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, const torch::Tensor& upstream)
{
    auto xs = x.detach().clone().requires_grad_(), ws = w.detach().clone().requires_grad_();
    auto bs = b.defined() ? b.detach().clone().requires_grad_() : b;
    const auto value = f(xs.transpose(0, 1), ws, bs); // a non-contiguous input
    (value * upstream).sum().backward();
    return {value.detach(), xs.grad(), ws.grad(), bs.defined() ? bs.grad() : torch::zeros({1})};
}

} // namespace

class TestScriptLinear : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void oneDnnIsFoundWhereLibTorchBringsIt()
    {
        // Debian's LibTorch links libdnnl: its sgemm must be found there, or no test below runs it.
        void* library = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
        if (!library)
            library = dlopen("libdnnl.so.3", RTLD_NOW | RTLD_NOLOAD);
        if (!library)
            QSKIP("this LibTorch does not load oneDNN as a library of its own");
        if (const char* choice = std::getenv("D2DPO_ONEDNN_GEMM"); choice && std::string_view(choice) == "off") {
            QVERIFY(!onednnGemmAvailable()); // the switch is heard (test.sh's second numeric pass sets it)
            return;
        }
        QVERIFY(onednnGemmAvailable());
    }

    void theOperationIsTorchLinearWithItsGradients_data()
    {
        QTest::addColumn<bool>("bias");
        QTest::newRow("with a bias") << true;
        QTest::newRow("without") << false;
    }

    void theOperationIsTorchLinearWithItsGradients()
    {
        QFETCH(bool, bias);
        if (!onednnGemmAvailable())
            QSKIP("no oneDNN here: the operation is torch::linear itself");
        torch::manual_seed(7);
        const auto x = torch::randn({7, 3, 40}), w = torch::randn({33, 40}) / 6.0;
        const auto b = bias ? torch::randn({33}) : torch::Tensor();
        const auto upstream = torch::randn({3, 7, 33});
        const auto ours = valueAndGradients(
            [](torch::Tensor xs, torch::Tensor ws, torch::Tensor bs) {
                return onednnLinear(xs, ws, bs.defined() ? std::optional(bs) : std::nullopt);
            },
            x, w, b, upstream);
        const auto theirs = valueAndGradients([](torch::Tensor xs, torch::Tensor ws,
                                                 torch::Tensor bs) { return torch::linear(xs, ws, bs); },
                                              x, w, b, upstream);
        for (size_t i = 0; i < ours.size(); ++i) {
            const double gap = maxAbsDiff(ours[i], theirs[i]) / (1.0 + theirs[i].abs().max().item<double>());
            QVERIFY2(gap <= 1e-5, qPrintable(QStringLiteral("tensor %1: %2").arg(i).arg(gap)));
        }
        // A frozen weight (the reference, a low-rank adapter's W0): only the input's gradient.
        auto xs = x.clone().requires_grad_();
        onednnLinear(xs, w, std::nullopt).sum().backward();
        QVERIFY(xs.grad().defined() && !w.grad().defined());
        QVERIFY(maxAbsDiff(xs.grad(), torch::ones({7, 3, 33}).matmul(w)) < 1e-4);
        // One input row alone ([K] -> [N]).
        const auto row = torch::randn({40});
        QVERIFY(maxAbsDiff(onednnLinear(row, w, std::nullopt), torch::linear(row, w)) < 1e-4);
        // Doubles, and nothing to multiply: torch::linear itself.
        const auto xd = x.to(torch::kDouble), wd = w.to(torch::kDouble);
        QVERIFY(torch::equal(onednnLinear(xd, wd, std::nullopt), torch::linear(xd, wd)));
        const auto empty = torch::empty({0, 40});
        QCOMPARE(onednnLinear(empty, w, std::nullopt).sizes(), torch::IntArrayRef({0, 33}));
    }

    void everyLinearOfAModelIsRoutedAndComputesWhatItsCodeDoes()
    {
        if (!onednnGemmAvailable())
            QSKIP("no oneDNN here");
        const std::string archive = modelArchive();
        auto routed = load(archive, false);
        auto plain = load(archive, true);
        QCOMPARE(routed->onednnLinears(), int64_t(4)); // two in the block, one in each branch
        QCOMPARE(plain->onednnLinears(), int64_t(0));
        torch::manual_seed(5);
        const auto tokens = torch::randint(0, 3, {4, kLength}, torch::kLong);
        const auto upstream = torch::randn({4, kLength, 2});
        for (const double sign : {1.0, -1.0}) // each branch of the model's `if`
            compareOn(*routed, *plain, tokens, torch::rand({4}) * sign, upstream);
        const auto t = torch::rand({4});
        c10::InferenceMode inference; // sampling's forwards
        QVERIFY(maxAbsDiff(routed->forward(tokens, t), plain->forward(tokens, t)) <= 1e-4);
        // The model's own code is what is exported.
        QVERIFY(routed->archive().find("d2dpo") == std::string::npos);
    }

private:
    static void compareOn(TorchScriptDenoiser& routed, TorchScriptDenoiser& plain, const torch::Tensor& tokens,
                          const torch::Tensor& t, const torch::Tensor& upstream)
    {
        std::vector<std::vector<torch::Tensor>> results;
        for (auto* model : {&routed, &plain}) {
            for (auto& p : model->parameters())
                p.mutable_grad() = torch::Tensor();
            const auto logits = model->forward(tokens, t);
            (logits * upstream).sum().backward();
            std::vector<torch::Tensor> out{logits.detach()};
            for (const auto& p : model->parameters())
                out.push_back(p.grad().clone());
            results.push_back(out);
        }
        for (size_t i = 0; i < results[0].size(); ++i) {
            const double gap =
                maxAbsDiff(results[0][i], results[1][i]) / (1.0 + results[1][i].abs().max().item<double>());
            QVERIFY2(gap <= 2e-5, qPrintable(QStringLiteral("tensor %1: %2").arg(i).arg(gap)));
        }
    }
};

QTEST_GUILESS_MAIN(TestScriptLinear)
#include "tst_scriptlinear.moc"
