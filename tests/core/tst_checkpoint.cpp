// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints round-trip bit-exactly (a model brought in too, its weights written once) and refuse
// corrupt, truncated, foreign and newer files (the export folder: tst_export).
#include <QTemporaryDir>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "support/testsupport.h"
#include "support/tinyscripted.h"

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/torchscriptdenoiser.h"
#include "model/transformerdenoiser.h"

#include <torch/serialize.h>

using namespace d2dpo;

namespace {

using test::readAll;
using test::writeAll;

/// A checkpoint's header: magic (8 bytes), format version (4), payload size (8), its CRC-32 (4).
constexpr size_t kCheckpointHeaderBytes = 8 + 4 + 8 + 4;

/// A checkpoint file of format `version` around `payload`, its checksum right.
std::string withHeader(uint32_t version, const std::string& payload)
{
    std::string file("D2DPOCKP");
    const uint64_t size = payload.size();
    const auto crc = uint32_t(
        crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), uInt(payload.size())));
    file.append(reinterpret_cast<const char*>(&version), sizeof version);
    file.append(reinterpret_cast<const char*>(&size), sizeof size);
    file.append(reinterpret_cast<const char*>(&crc), sizeof crc);
    return file + payload;
}

/// The safetensors payload of a format-2 checkpoint file.
SafetensorsContents payloadOf(const std::string& file)
{
    return readSafetensors(std::string_view(file).substr(kCheckpointHeaderBytes)).value();
}

/// A format-2 checkpoint with `contents` as its payload.
std::string rewritten(const SafetensorsContents& contents)
{
    std::string payload;
    appendSafetensors(payload, contents.tensors, contents.metadata);
    return withHeader(2, payload);
}

} // namespace

class TestCheckpoint final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_path;
    Denoiser m_model{nullptr};
    CheckpointInfo m_info;

    std::string path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    void expectRefused(const std::string& file, const char* phrase)
    {
        const auto loaded = loadCheckpoint(file, torch::kCPU);
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.error().find(phrase) != std::string::npos, loaded.error().c_str());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        torch::manual_seed(1);
        m_model = makeDenoiser(test::tinySpec(6, false), 2, torch::kCPU);
        m_info = {newCheckpointId(), "0123456789abcdef", "d2dpo", test::tinySpec(6, false),
                  R"({"beta":0.1})", R"({"vsr":0.5})", 42, utcNow()};
        m_info.spec.noise.eta = 0.25;
        m_path = path("model.d2dpo");
        const Status saved = saveCheckpoint(m_path, m_model, m_info);
        QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().c_str());
    }

    void roundTripIsBitExact()
    {
        auto loaded = loadCheckpoint(m_path, torch::kCPU);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        const auto original = m_model->named_parameters();
        const auto restored = loaded->model->named_parameters();
        QCOMPARE(restored.size(), original.size());
        for (const auto& item : original)
            QVERIFY2(torch::equal(item.value(), restored[item.key()]), item.key().c_str());
        const CheckpointInfo& info = loaded->info;
        QCOMPARE(info.id, m_info.id);
        QCOMPARE(info.parentId, m_info.parentId);
        QCOMPARE(info.kind, m_info.kind);
        QCOMPARE(info.step, int64_t(42));
        QCOMPARE(info.spec.noise.eta, 0.25);
        QCOMPARE(info.spec.model.timeConditioning, false);
        QCOMPARE(info.spec.task.length, 6);
        QCOMPARE(info.trainingJson, std::string(R"({"beta":0.1})"));
        // The same inputs give the same outputs.
        const auto tokens = torch::randint(0, 3, {4, 6}, torch::kLong);
        const auto t = torch::rand({4});
        QVERIFY(torch::equal(m_model->forward(tokens, t), loaded->model->forward(tokens, t)));
    }

    void idsThatAreNotIdsAreRefused()
    {
        // Ids, kind and time are shown and stored: escape sequences or 100,000 characters are not
        // taken from a crafted file (its checksum is valid: saveCheckpoint wrote it).
        for (const auto& [field, value] :
             {std::pair{"id", std::string("\x1b]0;owned\x07")}, std::pair{"parent_id", std::string(100'000, 'a')},
              std::pair{"kind", std::string("d2dpo\n")}, std::pair{"created_at", std::string("\x1b[2J")}}) {
            CheckpointInfo info = m_info;
            std::string* slot = std::string(field) == "id"          ? &info.id
                                : std::string(field) == "parent_id" ? &info.parentId
                                : std::string(field) == "kind"      ? &info.kind
                                                                    : &info.createdAt;
            *slot = value;
            const std::string file = path((std::string("crafted-") + field + ".d2dpo").c_str());
            QVERIFY(saveCheckpoint(file, m_model, info).ok());
            expectRefused(file, (std::string("its ") + field).c_str());
            const auto loaded = loadCheckpoint(file, torch::kCPU);
            QVERIFY(!loaded.ok() && loaded.error().size() < 400 && loaded.error().find('\x1b') == std::string::npos);
        }
    }

    void corruptFileIsRefused()
    {
        std::string bytes = readAll(m_path);
        bytes[bytes.size() / 2] ^= 0x5a;
        writeAll(path("corrupt.d2dpo"), bytes);
        expectRefused(path("corrupt.d2dpo"), "corrupt");
    }

    void truncatedFileIsRefused()
    {
        const std::string bytes = readAll(m_path);
        writeAll(path("truncated.d2dpo"), bytes.substr(0, bytes.size() - 100));
        expectRefused(path("truncated.d2dpo"), "truncated");
        writeAll(path("tiny.d2dpo"), bytes.substr(0, 10));
        expectRefused(path("tiny.d2dpo"), "not a d2dpo checkpoint");
    }

    void foreignFilesAreRefused()
    {
        writeAll(path("text.d2dpo"), "hello, this is not a checkpoint at all\n");
        expectRefused(path("text.d2dpo"), "not a d2dpo checkpoint");
        writeAll(path("empty.d2dpo"), "");
        expectRefused(path("empty.d2dpo"), "not a d2dpo checkpoint");
        expectRefused(path("missing.d2dpo"), "cannot open");
        expectRefused(m_dir.path().toStdString(), "");
    }

    void newerFormatIsRefused()
    {
        std::string bytes = readAll(m_path);
        bytes[8] = 99; // the format version follows the 8-byte magic
        writeAll(path("newer.d2dpo"), bytes);
        expectRefused(path("newer.d2dpo"), "newer");
    }

    void aModelBroughtInIsWrittenOnceAndReadBackExactly()
    {
        auto scripted = test::tinyScriptedModel(6);
        {
            torch::NoGradGuard noGrad;
            for (auto& p : scripted->parameters())
                p.add_(0.25); // trained: the archive must carry the weights as they are now
        }
        CheckpointInfo info{newCheckpointId(), "", "d2dpo", test::tinyScriptedSpec(6), "{}", "{}", 3, utcNow()};
        const std::string file = path("scripted.d2dpo");
        QVERIFY(saveCheckpoint(file, scripted, info));
        // The weights once, inside the TorchScript archive: not a second copy beside it.
        const std::string written = readAll(file);
        const size_t archiveBytes = scripted->archive().size();
        QVERIFY2(written.size() < archiveBytes + 4096,
                 qPrintable(QStringLiteral("%1 bytes for an archive of %2").arg(written.size()).arg(archiveBytes)));
        // Its code as an archive whose weights are empty tensors, then its weights as data.
        const SafetensorsContents payload = payloadOf(written);
        QCOMPARE(payload.tensors.front().first, std::string("d2dpo.torchscript"));
        QCOMPARE(payload.tensors.front().second.scalar_type(), torch::kUInt8);
        const auto parameters = scripted->named_parameters();
        QCOMPARE(payload.tensors.size(), 1 + parameters.size());
        for (size_t i = 1; i < payload.tensors.size(); ++i)
            QVERIFY2(torch::equal(payload.tensors[i].second, parameters[payload.tensors[i].first]),
                     payload.tensors[i].first.c_str());
        const std::string code(static_cast<const char*>(payload.tensors.front().second.data_ptr()),
                               size_t(payload.tensors.front().second.numel()));
        auto bare = TorchScriptDenoiser::load(code, test::tinyScriptedSpec(6).model.vocabulary, 6);
        QVERIFY(!bare.ok()); // without its weights it has no parameters to train
        QVERIFY2(bare.error().find("no parameters") != std::string::npos, bare.error().c_str());
        auto loaded = loadCheckpoint(file, torch::kCPU);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        const auto before = scripted->named_parameters();
        const auto after = loaded->model->named_parameters();
        QCOMPARE(after.size(), before.size());
        for (const auto& item : before)
            QVERIFY2(torch::equal(item.value(), after[item.key()]), item.key().c_str());
    }

    void aModelBroughtInWithItsWeightsApartStillLoads()
    {
        // A checkpoint written before the weights lived in the archive alone also held them apart,
        // under "weights": those are the model's. Made here as that writer made it.
        auto scripted = test::tinyScriptedModel(6);
        CheckpointInfo info{newCheckpointId(), "", "d2dpo", test::tinyScriptedSpec(6), "{}", "{}", 3, utcNow()};
        QVERIFY(saveCheckpoint(path("current.d2dpo"), scripted, info));
        const SafetensorsContents current = payloadOf(readAll(path("current.d2dpo")));
        torch::serialize::OutputArchive out, weights;
        out.write("info", c10::IValue(current.metadata.at("info")));
        for (const auto& item : scripted->named_parameters())
            weights.write(item.key(), item.value().detach() - 1.5);
        out.write("weights", weights);
        const std::string whole = scripted->archive(); // that writer's: the archive with its weights
        out.write("torchscript", torch::from_blob(const_cast<char*>(whole.data()), {int64_t(whole.size())},
                                                  torch::kUInt8));
        std::ostringstream payloadStream;
        out.save_to(payloadStream);
        const std::string file = withHeader(1, payloadStream.str());
        writeAll(path("apart.d2dpo"), file);
        auto loaded = loadCheckpoint(path("apart.d2dpo"), torch::kCPU);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        const auto after = loaded->model->named_parameters();
        for (const auto& item : scripted->named_parameters())
            QVERIFY2(torch::equal(item.value() - 1.5, after[item.key()]), item.key().c_str());
    }

    void aBuiltInModelsWeightsAreSafetensorsData()
    {
        // Format 2: after the header, a safetensors file holding each parameter and buffer under
        // its own name and the description in its metadata; no zip, no TorchScript, no code.
        const std::string file = readAll(m_path);
        uint32_t version = 0;
        std::memcpy(&version, file.data() + 8, sizeof version);
        QCOMPARE(version, uint32_t(2));
        QVERIFY(file.find("PK\x03\x04") == std::string::npos);
        const SafetensorsContents payload = payloadOf(file);
        QCOMPARE(payload.metadata.at("format"), std::string("d2dpo-checkpoint"));
        QVERIFY(payload.metadata.at("info").find(m_info.id) != std::string::npos);
        const auto parameters = m_model->named_parameters();
        const auto buffers = m_model->named_buffers();
        QCOMPARE(payload.tensors.size(), parameters.size() + buffers.size());
        for (const auto& [name, tensor] : payload.tensors) {
            const torch::Tensor* original = parameters.find(name) ? parameters.find(name) : buffers.find(name);
            QVERIFY2(original, name.c_str());
            QVERIFY2(torch::equal(tensor, *original), name.c_str());
        }
    }

    void aBuiltInCheckpointMustHoldExactlyItsModelsTensors()
    {
        const SafetensorsContents whole = payloadOf(readAll(m_path));
        SafetensorsContents extra = whole;
        extra.tensors.emplace_back("stowaway", torch::zeros({3}));
        writeAll(path("extra.d2dpo"), rewritten(extra));
        expectRefused(path("extra.d2dpo"), "it holds a tensor 'stowaway' that its model does not have");
        SafetensorsContents missing = whole;
        const std::string gone = missing.tensors.back().first;
        missing.tensors.pop_back();
        writeAll(path("missing-weight.d2dpo"), rewritten(missing));
        expectRefused(path("missing-weight.d2dpo"), ("its weight '" + gone + "' is missing").c_str());
        SafetensorsContents retyped = whole;
        retyped.tensors.front().second = retyped.tensors.front().second.to(torch::kDouble);
        writeAll(path("retyped.d2dpo"), rewritten(retyped));
        expectRefused(path("retyped.d2dpo"), "has the wrong type");
        SafetensorsContents reshaped = whole;
        reshaped.tensors.front().second = reshaped.tensors.front().second.reshape({-1});
        writeAll(path("reshaped.d2dpo"), rewritten(reshaped));
        expectRefused(path("reshaped.d2dpo"), "has the wrong shape");
        // Code under a built-in model's description is never loaded.
        SafetensorsContents code = whole;
        const std::string archive = test::tinyScriptedModel(6)->archive();
        code.tensors.emplace_back("d2dpo.torchscript",
                                  torch::from_blob(const_cast<char*>(archive.data()), {int64_t(archive.size())},
                                                   torch::kUInt8));
        writeAll(path("code.d2dpo"), rewritten(code));
        expectRefused(path("code.d2dpo"), "it says it holds a native model but carries TorchScript code");
        SafetensorsContents foreign = whole;
        foreign.metadata.erase("format");
        writeAll(path("foreign-metadata.d2dpo"), rewritten(foreign));
        expectRefused(path("foreign-metadata.d2dpo"), "not a d2dpo checkpoint's");
    }

    void anImportedModelsWeightsMustAllBeThere()
    {
        auto scripted = test::tinyScriptedModel(6);
        CheckpointInfo info{newCheckpointId(), "", "d2dpo", test::tinyScriptedSpec(6), "{}", "{}", 3, utcNow()};
        QVERIFY(saveCheckpoint(path("weights-apart.d2dpo"), scripted, info));
        const SafetensorsContents whole = payloadOf(readAll(path("weights-apart.d2dpo")));
        SafetensorsContents missing = whole;
        const std::string gone = missing.tensors.back().first;
        missing.tensors.pop_back();
        writeAll(path("imported-missing.d2dpo"), rewritten(missing));
        expectRefused(path("imported-missing.d2dpo"), ("its weight '" + gone + "' is missing").c_str());
        SafetensorsContents extra = whole;
        extra.tensors.emplace_back("stowaway", torch::zeros({2}));
        writeAll(path("imported-extra.d2dpo"), rewritten(extra));
        expectRefused(path("imported-extra.d2dpo"), "a tensor 'stowaway' that its model does not have");
        SafetensorsContents retyped = whole;
        retyped.tensors.back().second = retyped.tensors.back().second.to(torch::kDouble);
        writeAll(path("imported-retyped.d2dpo"), rewritten(retyped));
        expectRefused(path("imported-retyped.d2dpo"), "has the wrong type");
    }

    void aFormatOneCheckpointLoadsThroughTheGate()
    {
        // As d2dpo wrote it before 2026-11-28: LibTorch's OutputArchive with the description and
        // the weights. It declares modules and holds tensors, so it passes the gate and loads.
        torch::serialize::OutputArchive out, weights;
        out.write("info", c10::IValue(payloadOf(readAll(m_path)).metadata.at("info")));
        for (const auto& item : m_model->named_parameters())
            weights.write(item.key(), item.value().detach());
        for (const auto& item : m_model->named_buffers())
            weights.write(item.key(), item.value(), /*is_buffer=*/true);
        out.write("weights", weights);
        std::ostringstream payload;
        out.save_to(payload);
        writeAll(path("format-1.d2dpo"), withHeader(1, payload.str()));
        auto loaded = loadCheckpoint(path("format-1.d2dpo"), torch::kCPU);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        for (const auto& item : m_model->named_parameters())
            QVERIFY2(torch::equal(item.value(), loaded->model->named_parameters()[item.key()]), item.key().c_str());
        // One whose payload is a model's archive, with functions: someone's code, never loaded.
        writeAll(path("format-1-code.d2dpo"), withHeader(1, test::tinyScriptedModel(6)->archive()));
        expectRefused(path("format-1-code.d2dpo"), "defines the function 'forward'");
    }

    void refusedLoadLeavesTheFileAlone()
    {
        const std::string before = readAll(path("corrupt.d2dpo"));
        expectRefused(path("corrupt.d2dpo"), "corrupt");
        QVERIFY(readAll(path("corrupt.d2dpo")) == before);
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
