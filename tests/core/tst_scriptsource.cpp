// SPDX-License-Identifier: GPL-3.0-or-later
// The syntax check of a TorchScript archive's code (model/scriptsource.h), with the code as
// torch.jit.save writes it (every literal form of its defaults and constants must pass) and as an
// editor of the zip could write it (every value computed while compiling must be refused), and
// the op allowlist applied to compiled graphs (model/scriptoperations.h), the check behind it.
#include <QtTest/QtTest>

#include <string>

#include <torch/script.h>

#include "model/scriptoperations.h"
#include "model/scriptsource.h"

using namespace d2dpo;

namespace {

/// The literal forms PyTorch 1.13's python_print writes for defaults and class constants
/// (taken from an archive it saved).
const char* const kAsSaved = R"(op_version_set = 8
import __torch__.torch.nn.modules.linear
class M(Module):
  __parameters__ = []
  __buffers__ = ["buf", ]
  buf : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  maybe : Optional[bool]
  lin : __torch__.torch.nn.modules.linear.Linear
  __annotations__["0"] = __torch__.torch.nn.modules.linear.Linear
  tt : Final[Tuple[int, float]] = (1, -2.5)
  s : Final[str] = "x\"y\'"
  j : Final[int] = -4
  k : Final[float] = inf
  n : Final[NoneType] = None
  def forward(self: __torch__.M,
    x: Tensor) -> Tensor:
    _1 = __torch__.helper(x, -inf, nan, None, None, (1, "a"), True, "hi", torch.device("cpu"), 6, -1.0000000000000001e-30, -9223372036854775807, inf, )
    return torch.add(ops.prim.NumToTensor(torch.size(x, 0)), CONSTANTS.c0)
def helper(x: Tensor,
    a: float=-inf,
    b: float=nan,
    c: Optional[int]=None,
    d: Optional[List[int]]=None,
    e: Tuple[int, str]=(1, "a"),
    f: bool=True,
    g: str="hi",
    h: Device=torch.device("cpu"),
    i: int=6,
    l: float=-1.0000000000000001e-30,
    m: int=-9223372036854775807 - 1,
    n: float=inf) -> __torch__.P:
  return __torch__.P(torch.mul(x, 2), 2)
class P(NamedTuple):
  a : Tensor
  b : int
)";

std::string edited(const std::string& from, const std::string& to)
{
    std::string source = kAsSaved;
    const size_t at = source.find(from);
    Q_ASSERT(at != std::string::npos);
    return source.replace(at, from.size(), to);
}

const std::string kPoke = "int(torch.from_file(\"victim\", True, 4, dtype=0).fill_(65).sum())";

} // namespace

class TestScriptSource final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void codeAsTorchScriptWritesItPasses()
    {
        const Status status = checkScriptSource(kAsSaved, "code/__torch__.py", ArchiveCode::Functions);
        QVERIFY2(status.ok(), status.ok() ? "" : status.error().c_str());
    }

    void aValueComputedWhileCompilingIsRefused_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("default") << QString::fromStdString(edited("g: str=\"hi\"", "g: int=" + kPoke))
                                 << "(code/x.py, line 28) gives the parameter 'g' a default value that is computed";
        QTest::newRow("default in a method") << QString::fromStdString(edited("x: Tensor) -> Tensor:", "x: Tensor, z: int=" + kPoke + ") -> Tensor:"))
                                             << "parameter 'z' a default value that is computed";
        QTest::newRow("default inside a tuple") << QString::fromStdString(edited("(1, \"a\"),\n", "(1, " + kPoke + "),\n"))
                                                << "parameter 'e' a default value that is computed";
        QTest::newRow("default negated") << QString::fromStdString(edited("a: float=-inf", "a: float=-" + kPoke))
                                         << "parameter 'a' a default value that is computed";
        QTest::newRow("default by torch.device of a call")
            << QString::fromStdString(edited("h: Device=torch.device(\"cpu\")", "h: Device=torch.device(str(" + kPoke + "))"))
            << "parameter 'h' a default value that is computed";
        QTest::newRow("class constant") << QString::fromStdString(edited("j : Final[int] = -4", "j : Final[int] = " + kPoke))
                                        << "gives class 'M' a value that is computed";
        QTest::newRow("parameter list") << QString::fromStdString(edited("__parameters__ = []", "__parameters__ = [" + kPoke + "]"))
                                        << "gives class 'M' a value that is computed";
        QTest::newRow("annotation") << QString::fromStdString(edited("= __torch__.torch.nn.modules.linear.Linear", "= " + kPoke))
                                    << "gives class 'M' a value that is computed";
        QTest::newRow("attribute type") << QString::fromStdString(edited("maybe : Optional[bool]", "maybe : Optional[" + kPoke + "]"))
                                        << "declares an attribute of class 'M' with a type";
        QTest::newRow("parameter type") << QString::fromStdString(edited("c: Optional[int]", "c: Optional[" + kPoke + "]"))
                                        << "gives the parameter 'c' a type";
        QTest::newRow("return type") << QString::fromStdString(edited("-> __torch__.P:", "-> " + kPoke + ":"))
                                     << "gives the function 'helper' a return type";
        QTest::newRow("an op off the allowlist") << QString::fromStdString(edited("torch.mul(x, 2)", "torch.from_file(\"v\", True, 4)"))
                                                 << "calls aten::from_file, which is not on the op allowlist";
        QTest::newRow("ops namespace") << QString::fromStdString(edited("ops.prim.NumToTensor", "ops.aten.save"))
                                       << "calls aten::save";
        QTest::newRow("a deeper torch name") << QString::fromStdString(edited("torch.mul(x, 2)", "torch.ops.aten.save(x, \"v\")"))
                                             << "calls torch.ops..., which is not";
        QTest::newRow("a statement in a class") << QString::fromStdString(edited("  j : Final[int] = -4\n", "  j : Final[int] = -4\n  if True:\n    pass\n"))
                                                << "other than an attribute, a constant or a method";
        QTest::newRow("a statement at the top") << QString::fromStdString(std::string(kAsSaved) + "x = 1\n")
                                                << "holds a statement other than a class or a function";
        QTest::newRow("not TorchScript") << "class M(Module):\n  def forward(self\n" << "is not TorchScript as LibTorch reads it";
        QTest::newRow("deep brackets") << QString::fromStdString("def f(x: int=" + std::string(5000, '(') + "1" + std::string(5000, ')') + "):\n  pass\n")
                                       << "nests brackets more than 100 deep";
    }

    void aValueComputedWhileCompilingIsRefused()
    {
        QFETCH(QString, source);
        QFETCH(QString, phrase);
        const Status status = checkScriptSource(source.toStdString(), "code/x.py", ArchiveCode::Functions);
        QVERIFY(!status.ok());
        QVERIFY2(status.error().find(phrase.toStdString()) != std::string::npos, status.error().c_str());
    }

    void aCheckpointOfFormatOneDefinesNoFunction()
    {
        const Status status = checkScriptSource(kAsSaved, "code/__torch__.py", ArchiveCode::None);
        QVERIFY(!status.ok());
        QVERIFY2(status.error().find("line 17) defines the function 'forward'") != std::string::npos, status.error().c_str());
        const Status declarations = checkScriptSource("class M(Module):\n  __parameters__ = [\"w\", ]\n  w : Tensor\n",
                                                      "code/__torch__.py", ArchiveCode::None);
        QVERIFY(declarations.ok());
    }

    /// Behind the syntax check, the compiled graphs: an op reached in a way the source does not
    /// name (here a method TorchScript compiles itself) is refused by its node.
    void theCompiledGraphIsCheckedToo()
    {
        torch::jit::Module module("__torch__.M");
        module.define(R"(
def forward(self, x: Tensor) -> Tensor:
    y = x.clone()
    y.set_()
    return x + y.sum()
)");
        const Status status = checkScriptOperations(module);
        QVERIFY(!status.ok());
        QVERIFY2(status.error().find("aten::set_") != std::string::npos, status.error().c_str());
        torch::jit::Module fine("__torch__.N");
        fine.define("def forward(self, x: Tensor) -> Tensor:\n    return torch.relu(x) + 1\n");
        QVERIFY(checkScriptOperations(fine).ok());
    }
};

QTEST_GUILESS_MAIN(TestScriptSource)
#include "tst_scriptsource.moc"
