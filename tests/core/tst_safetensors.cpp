// SPDX-License-Identifier: GPL-3.0-or-later
// Tensors as data (io/safetensors.h): what is written reads back bit for bit, and every lie a
// crafted header can tell (its length, its depth, a key twice, a dtype, a shape against its bytes,
// ranges outside the file, overlapping or leaving gaps) is refused with a sentence before a byte
// is copied. Python's own safetensors is not packaged for Debian 12, so the layout is checked
// against the format's definition byte by byte instead.
#include <QtTest/QtTest>

#include <cstring>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "io/safetensors.h"

using namespace d2dpo;

namespace {

/// A safetensors file from a header written by hand and `data` bytes after it.
std::string craft(const std::string& header, const std::string& data)
{
    std::string out;
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        out.push_back(char((n >> (8 * i)) & 0xff));
    return out + header + data;
}

QByteArray asBytes(const std::string& bytes) { return QByteArray(bytes.data(), qsizetype(bytes.size())); }

void row(const char* name, const std::string& bytes, const char* phrase)
{
    QTest::newRow(name) << asBytes(bytes) << QString::fromUtf8(phrase);
}

std::string refusal(const std::string& bytes)
{
    const auto read = readSafetensors(bytes);
    return read ? std::string("(read)") : read.error();
}

} // namespace

class TestSafetensors final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tensorsRoundTripBitForBit()
    {
        torch::manual_seed(1);
        const std::vector<std::pair<std::string, torch::Tensor>> tensors{
            {"blocks.0.weight", torch::randn({3, 5})},
            {"scale", torch::tensor(2.5, torch::kDouble)},
            {"ids", torch::arange(7, torch::kLong)},
            {"half", torch::randn({4}).to(torch::kBFloat16)},
            {"mask", torch::tensor({true, false, true})},
            {"empty", torch::zeros({0, 4})},
            {"strided", torch::randn({4, 6}).t()}}; // not contiguous: written as its values
        const std::map<std::string, std::string> metadata{{"format", "test"}, {"info", "{\"a\": 1}"}};
        std::string bytes;
        QVERIFY(appendSafetensors(bytes, tensors, metadata));
        QCOMPARE(uint64_t(bytes.size()), safetensorsBytes(tensors, metadata));
        uint64_t headerBytes = 0;
        std::memcpy(&headerBytes, bytes.data(), 8);
        QCOMPARE(headerBytes % 8, uint64_t(0)); // the tensors' bytes start aligned
        const auto read = readSafetensors(bytes);
        QVERIFY2(read, read ? "" : read.error().c_str());
        QCOMPARE(read->metadata, metadata);
        QCOMPARE(read->tensors.size(), tensors.size());
        for (const auto& [name, original] : tensors) {
            const auto found = std::find_if(read->tensors.begin(), read->tensors.end(),
                                            [&](const auto& item) { return item.first == name; });
            QVERIFY2(found != read->tensors.end(), name.c_str());
            QCOMPARE(found->second.scalar_type(), original.scalar_type());
            QVERIFY2(found->second.sizes() == original.sizes(), name.c_str());
            QVERIFY2(torch::equal(found->second, original), name.c_str());
        }
        // The header is the format's: dtype, shape and data_offsets, from the end of the header.
        const auto header = nlohmann::json::parse(bytes.substr(8, headerBytes));
        QCOMPARE(header["blocks.0.weight"]["dtype"].get<std::string>(), std::string("F32"));
        QCOMPARE(header["blocks.0.weight"]["data_offsets"][0].get<uint64_t>(), uint64_t(0));
        QCOMPARE(header["blocks.0.weight"]["data_offsets"][1].get<uint64_t>(), uint64_t(60));
        QCOMPARE(header["scale"]["shape"].size(), size_t(0));
    }

    void aByteOtherThanZeroOrOneIsReadAsTrue()
    {
        const auto read = readSafetensors(craft(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                                std::string("\x00\x07\x01", 3)));
        QVERIFY(read);
        QVERIFY(torch::equal(read->tensors[0].second, torch::tensor({false, true, true})));
    }

    void craftedFilesAreRefusedWithASentence_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("phrase");
        const std::string f32x2 = std::string(8, '\0');
        const auto one = [](const std::string& entry) { return "{\"w\":" + entry + "}"; };
        row("shorter than its length", std::string("\x01\x02", 2), "shorter than its header's length");
        std::string huge(8, '\xff');
        row("a header of 2^64 bytes", huge + "{}", "more than the file or the 100 MiB limit");
        row("a header longer than the file", craft("{}", "").substr(0, 9), "more than the file");
        row("not an object", craft("[1, 2]", ""), "not a JSON object");
        row("not JSON", craft("{\"w\": ", ""), "not JSON");
        row("100,000 levels deep", craft("{\"w\":" + std::string(100000, '[') + std::string(100000, ']') + "}", ""), "nested more than 3");
        row("a name twice", craft(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     f32x2), "names 'w' twice");
        row("an unknown dtype", craft(one(R"({"dtype":"F8","shape":[2],"data_offsets":[0,8]})"), f32x2), "has a dtype this program does not read");
        row("a missing field", craft(one(R"({"dtype":"F32","shape":[2]})"), f32x2), "exactly dtype, shape and data_offsets");
        row("a negative size", craft(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), f32x2), "not a whole number from 0 to 2^40");
        row("a shape against its bytes", craft(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), f32x2), "takes 8 bytes");
        row("a size past 2^40 in an empty tensor",
            craft(one(R"({"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]})"), ""),
            "not a whole number from 0 to 2^40");
        row("a shape whose size wraps around", craft(one(R"({"dtype":"F32","shape":[549755813888,549755813888,549755813888],"data_offsets":[0,8]})"), f32x2), "states more elements than any file holds");
        row("a range past the end", craft(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), f32x2), "not a range inside");
        row("a range backwards", craft(one(R"({"dtype":"F32","shape":[0],"data_offsets":[8,0]})"), f32x2), "not a range inside");
        row("an offset of 2^64", craft(one(R"({"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,0]})"), f32x2), "not a range inside");
        row("overlapping tensors", craft(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                     f32x2), "overlaps the bytes of another");
        row("a gap", craft(one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), f32x2), "leaves a gap before it");
        row("bytes of no tensor", craft(one(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})"), f32x2), "4 bytes that belong to no tensor");
        row("metadata that is not text", craft(R"({"__metadata__":{"a":1}})", ""), "is not a string");
    }

    void craftedFilesAreRefusedWithASentence()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, phrase);
        const std::string error = refusal(bytes.toStdString());
        QVERIFY2(QString::fromStdString(error).contains(phrase), error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
