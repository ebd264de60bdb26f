// SPDX-License-Identifier: GPL-3.0-or-later
// The pickle walker (model/picklecheck.h) on pickles built byte by byte: a module with one tensor
// as TorchScript writes it passes; each way of lying to LibTorch 1.13's unpickler is refused with
// its opcode's offset: a storage larger than its record, a view past its storage (by size, stride
// or offset), a negative stride written as LONG1, an argument cut short, a stack left with two
// values, and a memo read of a huge tuple repeated (walked without copying it each time).
#include <QtTest/QtTest>

#include <string>

#include "model/picklecheck.h"

using namespace d2dpo;

namespace {

std::string text(const std::string& s)
{
    const uint32_t n = uint32_t(s.size());
    return std::string("X") + char(n & 255) + char((n >> 8) & 255) + char((n >> 16) & 255) + char(n >> 24) + s;
}
std::string small(int n) { return std::string("K") + char(n); }

/// A module holding one float tensor over storage "0" of `numel` elements: offset, sizes, strides.
std::string module(int numel, const std::string& offset, const std::string& sizes, const std::string& strides)
{
    return std::string("\x80\x02") + "c__torch__\nM\n" + ")\x81" + "}(" + text("w") +
           "ctorch._utils\n_rebuild_tensor_v2\n" + "((" + text("storage") + "ctorch\nFloatStorage\n" + text("0") +
           text("cpu") + small(numel) + "tQ" + offset + "(" + sizes + "t(" + strides + "t\x89" +
           "ccollections\nOrderedDict\n)R" + "tR" + "ub.";
}

Status walk(const std::string& pickle, uint64_t recordBytes = 24)
{
    return checkPickle(pickle, "data.pkl", [&](const std::string& key) -> std::optional<uint64_t> {
        return key == "0" ? std::optional(recordBytes) : std::nullopt;
    });
}

bool refusedWith(const Status& s, const char* phrase)
{
    if (s)
        return false;
    if (!QString::fromStdString(s.error()).contains(QLatin1String(phrase))) {
        qWarning("%s", s.error().c_str());
        return false;
    }
    return true;
}

} // namespace

class TestPickleCheck final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aTensorAsTorchScriptWritesItPasses()
    {
        QVERIFY(walk(module(6, small(0), small(2) + small(3), small(3) + small(1))));
        // An empty view may sit at the storage's end; a transposed one reads the same elements.
        QVERIFY(walk(module(6, small(6), small(0) + small(3), small(3) + small(1))));
        QVERIFY(walk(module(6, small(0), small(3) + small(2), small(1) + small(3))));
    }

    void aStorageLargerThanItsRecordIsRefused()
    {
        QVERIFY(refusedWith(walk(module(7, small(0), small(7), small(1))), "7 elements of 4 bytes in the record '0' of 24 bytes"));
        QVERIFY(refusedWith(checkPickle(module(6, small(0), small(6), small(1)), "data.pkl", {}), "does not hold"));
    }

    void aViewPastItsStorageIsRefused()
    {
        QVERIFY(refusedWith(walk(module(6, small(0), small(2) + small(4), small(4) + small(1))), "reads element 7 of a storage of 6"));
        QVERIFY(refusedWith(walk(module(6, small(1), small(6), small(1))), "reads element 6 of a storage of 6"));
        QVERIFY(refusedWith(walk(module(6, small(7), small(0), small(1))), "offset 7"));
        // LONG1 of one byte 0xff is -1: a negative stride walks backwards out of the storage.
        QVERIFY(refusedWith(walk(module(6, small(0), small(2), std::string("\x8a\x01\xff", 3))), "not a count"));
        // 2^62 elements times a stride of 4 overflows 64 bits.
        const std::string huge = std::string("\x8a\x08", 2) + std::string("\x00\x00\x00\x00\x00\x00\x00\x40", 8);
        QVERIFY(refusedWith(walk(module(6, small(0), huge, small(4))), "extent overflows"));
    }

    void aPickleThatLiesToTheStackIsRefused()
    {
        QVERIFY(refusedWith(walk(std::string("\x80\x02t.")), "byte 2: TUPLE without a MARK"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "e."), "APPENDS without a MARK"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "h\x05."), "memo slot 5, which was never set"));
        // LibTorch would grow its memo to slot 2^32 - 1 (64 GiB) before reading anything more.
        QVERIFY(refusedWith(walk(std::string("\x80\x02Nr\xff\xff\xff\xff.", 9)), "memo slot 4294967295 after 0 slots"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "NN."), "STOP with 2 values"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + std::string("X\xff\0\0\0" "ab.", 8)), "cut short"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "N.N"), "STOP before the end"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "N"), "no STOP"));
        QVERIFY(refusedWith(walk(std::string("\x80\x04") + "N."), "protocol 4"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "cposix\nsystem\n."), "the global 'posix.system'"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "c__torch__\nM\n)R."), "a call of '__torch__ M'"));
        QVERIFY(refusedWith(walk(std::string("\x80\x02") + "S'x'\n."), "the opcode 0x53"));
    }

    void aMemoReadOfAHugeTupleIsNotCopied()
    {
        // A tuple of 100,000 values kept in the memo, then read 100,000 times: as TorchScript's
        // own unpickler does, the walker shares it (a copy per read would be 10^10 values).
        std::string pickle = "\x80\x02(";
        for (int i = 0; i < 100000; ++i)
            pickle += "N";
        pickle += std::string("tq\x00", 3);
        pickle += "(";
        for (int i = 0; i < 100000; ++i)
            pickle += std::string("h\x00", 2);
        pickle += "t\x86.";
        QVERIFY(walk(pickle)); // copied per read, it would run out of memory instead
    }
};

QTEST_APPLESS_MAIN(TestPickleCheck)
#include "tst_picklecheck.moc"
