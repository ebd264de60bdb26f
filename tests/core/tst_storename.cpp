// SPDX-License-Identifier: GPL-3.0-or-later
// A store's name in messages never carries a secret (store/storename.h): URLs read as libpq reads
// them (every parameter, keys percent-decoded, the last of a repeated key winning), key=value
// strings, and the password the desktop takes from a URL.
#include <QtTest/QtTest>

#include "store/storename.h"

using namespace d2dpo;

class TestStoreName final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void urlsLoseEverySecret_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("shown");
        QTest::addColumn<QString>("password"); // what libpq would send (storePassword)
        QTest::newRow("user part") << "postgresql://ana:SECRET@db.lab:5433/team?sslmode=require"
                                   << "postgresql://ana@db.lab:5433/team?sslmode=require" << "SECRET";
        QTest::newRow("encoded user part") << "postgresql://ana:SE%40CRET@/team?host=%2Ftmp%2Fpg"
                                           << "postgresql://ana@/team?host=%2Ftmp%2Fpg" << "SE@CRET";
        QTest::newRow("parameter") << "postgresql://ana@/team?host=/tmp&password=SECRET&port=5"
                                   << "postgresql://ana@/team?host=/tmp&port=5" << "SECRET";
        QTest::newRow("the last of two wins") << "postgresql://ana@/team?password=x&password=SECRET"
                                              << "postgresql://ana@/team" << "SECRET";
        QTest::newRow("after the user part") << "postgresql://ana:first@/team?password=SECRET"
                                             << "postgresql://ana@/team" << "SECRET";
        QTest::newRow("encoded key") << "postgresql://ana@/team?%70assword=SECRET&host=/s"
                                     << "postgresql://ana@/team?host=/s" << "SECRET";
        QTest::newRow("encoded ampersand in the value") << "postgresql://ana@/team?password=SE%26CRET"
                                                        << "postgresql://ana@/team" << "SE&CRET";
        QTest::newRow("the SSL key's") << "postgresql://ana@/team?sslpassword=SECRET&sslmode=verify-full"
                                       << "postgresql://ana@/team?sslmode=verify-full" << "";
        QTest::newRow("both") << "postgresql://ana:SECRET@/team?sslpassword=SECRET2"
                              << "postgresql://ana@/team" << "SECRET";
        QTest::newRow("upper case") << "postgresql://ana@/team?PASSWORD=SECRET" << "postgresql://ana@/team" << "";
        // Malformed for libpq (it refuses them), but printed in its refusal: still nothing secret.
        QTest::newRow("empty parameters") << "postgresql://ana@/team?&&password=SECRET&"
                                          << "postgresql://ana@/team" << "SECRET";
        QTest::newRow("an @ in the password unencoded") << "postgresql://ana:SE@CRET@db/team"
                                                        << "postgresql://ana@db/team" << "SE";
        QTest::newRow("an @ among the parameters") << "postgresql://db?password=SE@CRET"
                                                   << "postgresql://(a URL whose '@' stands among its parameters: "
                                                      "not shown)"
                                                   << "";
        QTest::newRow("nothing secret") << "postgres://max@/team?host=/tmp" << "postgres://max@/team?host=/tmp"
                                        << "";
        QTest::newRow("an @ in the database name") << "postgresql:///te@m?password=SECRET"
                                                   << "postgresql:///te@m" << "SECRET";
    }
    void urlsLoseEverySecret()
    {
        QFETCH(QString, url);
        QFETCH(QString, shown);
        QFETCH(QString, password);
        const std::string name = storeNameForMessages(url.toStdString());
        QCOMPARE(QString::fromStdString(name), shown);
        QVERIFY(name.find("SECRET") == std::string::npos && name.find("SE%") == std::string::npos);
        QCOMPARE(QString::fromStdString(storePassword(url.toStdString())), password);
    }

    void keyValueStringsLoseEverySecret()
    {
        QCOMPARE(storeNameForMessages("host=/tmp dbname=team password='se cr\\'et' sslpassword=k2 port=5"),
                 std::string("host=/tmp dbname=team port=5"));
        QCOMPARE(storeNameForMessages("password=SECRET host=/tmp"), std::string("host=/tmp"));
        QCOMPARE(storeNameForMessages("password=x password=SECRET host=/tmp  sslpassword='a b'"), std::string("host=/tmp"));
        QCOMPARE(storeNameForMessages("/home/ana/password=store.db"), std::string("/home/ana/password=store.db"));
    }

    void aPasswordAddedIsReadBack()
    {
        QCOMPARE(storeSslPassword("postgresql://ana@/team?sslpassword=a&sslpassword=k%20ey"), std::string("k ey"));
        QCOMPARE(storeSslPassword(storeUrlWithSslPassword("postgresql://ana@/team", "p&ss")), std::string("p&ss"));
        const std::string url = storeUrlWithPassword("postgresql://ana@/team?host=/tmp", "p@ss&word=1%");
        QCOMPARE(storePassword(url), std::string("p@ss&word=1%"));
        QCOMPARE(storeNameForMessages(url), std::string("postgresql://ana@/team?host=/tmp"));
    }
};

QTEST_GUILESS_MAIN(TestStoreName)
#include "tst_storename.moc"
