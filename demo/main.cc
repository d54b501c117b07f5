// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard-browser: a small Qt 6 WebEngine browser protected by urlguard.
//
//   urlguard-browser --data-dir DIR [--server URL --public-key PUB.pem... --list NAME...] [options] [URL]
//   urlguard-browser --snapshot FILE|DIR... [URL]
//
// Every request of the browser goes through the local urlguard lists; a listed page shows a warning instead,
// listed images, scripts and frames are blocked.
//
// --data-dir opens a urlguard data directory with urlguard::Client: the lists urlguardd (or this browser's
// "Sync now") installed there, followed as new generations appear. With --server, local hits are verified
// (only 4-byte hash prefixes leave the machine): a confirmed hit warns naming the list and threat, a filter
// false positive loads the page, and a hit nobody could verify warns as unverified. With --server and
// --public-key, "Sync now" in the side panel downloads signed updates (--list names the lists to subscribe
// to; without it, the installed ones).
//
// --snapshot opens snapshot files (or a directory of *.ugs files) offline: local verdicts only.
//
// Exit status: 0 normal, 1 the lists or a key could not be opened, 2 bad usage.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QWebEngineProfile>
#include <cstdio>
#include <memory>
#include <string>

#include "browser_window.h"
#include "protection.h"
#include "request_guard.h"
#include "verifier.h"
#include "warning_page.h"

namespace {

// A PEM public key is a few hundred bytes; anything past this is not one.
constexpr qint64 kMaxPublicKeyFileBytes = 64 * 1024;

std::string toStd(const QString &s)
{
    return s.toStdString();
}

std::string toNativePath(const QString &path)
{
    const QByteArray encoded = QFile::encodeName(path);
    return std::string(encoded.constData(), static_cast<size_t>(encoded.size()));
}

// Reads a PEM file of at most kMaxPublicKeyFileBytes; false with `error` set otherwise.
bool readPublicKey(const QString &path, std::string *pem, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    const QByteArray bytes = file.read(kMaxPublicKeyFileBytes + 1);
    if (bytes.size() > kMaxPublicKeyFileBytes) {
        *error = QStringLiteral("%1: larger than %2 bytes, not a public key")
                         .arg(path)
                         .arg(kMaxPublicKeyFileBytes);
        return false;
    }
    *pem = bytes.toStdString();
    return true;
}

} // namespace

int main(int argc, char *argv[])
{
    registerUrlGuardScheme(); // before the QApplication, as Qt WebEngine requires
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("urlguard-browser"));
    QApplication::setApplicationVersion(QStringLiteral(URLGUARD_VERSION_STRING));

    QCommandLineParser parser;
    parser.setApplicationDescription(
            QApplication::translate("main", "A Qt WebEngine browser protected by urlguard threat lists."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dataDirOption(
            QStringLiteral("data-dir"),
            QApplication::translate("main", "Use the urlguard data directory <dir> (as urlguardd keeps it)."),
            QStringLiteral("dir"));
    const QCommandLineOption serverOption(
            QStringLiteral("server"),
            QApplication::translate("main", "Update and verification server <url> (with --data-dir)."),
            QStringLiteral("url"));
    const QCommandLineOption publicKeyOption(
            QStringLiteral("public-key"),
            QApplication::translate("main", "Trusted publisher key <pem> for Sync now (repeatable)."),
            QStringLiteral("pem"));
    const QCommandLineOption listOption(
            QStringLiteral("list"),
            QApplication::translate("main",
                                    "Subscribe to list <name> for Sync now (repeatable; default: the "
                                    "installed lists)."),
            QStringLiteral("name"));
    const QCommandLineOption allowOption(
            QStringLiteral("allow"),
            QApplication::translate("main", "Always allow <entry>: a host, URL or IP (repeatable)."),
            QStringLiteral("entry"));
    const QCommandLineOption deadlineOption(
            QStringLiteral("verify-deadline-ms"),
            QApplication::translate("main", "Give up verifying a hit after <ms> (default 1500)."),
            QStringLiteral("ms"));
    const QCommandLineOption noVerifyOption(
            QStringLiteral("no-verify"),
            QApplication::translate("main", "Never ask the verification API (hits stay unverified)."));
    const QCommandLineOption caBundleOption(
            QStringLiteral("ca-bundle"),
            QApplication::translate("main",
                                    "CA certificates <file> for an HTTPS server (default: the system's)."),
            QStringLiteral("file"));
    const QCommandLineOption snapshotOption(
            QStringLiteral("snapshot"),
            QApplication::translate("main",
                                    "Open the list <file> offline, or every *.ugs in a directory "
                                    "(repeatable)."),
            QStringLiteral("file"));
    parser.addOptions({dataDirOption, serverOption, publicKeyOption, listOption, allowOption, deadlineOption,
                       noVerifyOption, caBundleOption, snapshotOption});
    parser.addPositionalArgument(QStringLiteral("url"), QApplication::translate("main", "The page to open."),
                                 QStringLiteral("[url]"));
    parser.process(app);

    if (parser.isSet(dataDirOption) && parser.isSet(snapshotOption)) {
        std::fprintf(stderr, "urlguard-browser: give --data-dir or --snapshot, not both\n");
        return 2;
    }
    if (parser.positionalArguments().size() > 1) {
        std::fprintf(stderr, "urlguard-browser: at most one URL\n");
        return 2;
    }
    for (const QCommandLineOption *clientOnly : {&serverOption, &publicKeyOption, &listOption, &allowOption,
                                                 &deadlineOption, &noVerifyOption, &caBundleOption}) {
        if (parser.isSet(*clientOnly) && !parser.isSet(dataDirOption)) {
            std::fprintf(stderr, "urlguard-browser: --%s needs --data-dir\n",
                         qPrintable(clientOnly->names().first()));
            return 2;
        }
    }

    ListSource source;
    if (parser.isSet(dataDirOption)) {
        source.kind = ListSource::Kind::DataDirectory;
        urlguard::ClientOptions &options = source.client;
        options.data_dir = toNativePath(parser.value(dataDirOption));
        options.server_url = toStd(parser.value(serverOption));
        for (const QString &path : parser.values(publicKeyOption)) {
            std::string pem;
            QString error;
            if (!readPublicKey(path, &pem, &error)) {
                std::fprintf(stderr, "urlguard-browser: cannot read the public key %s\n", qPrintable(error));
                return 1;
            }
            options.public_key_pems.push_back(std::move(pem));
        }
        for (const QString &list : parser.values(listOption))
            options.lists.push_back(toStd(list));
        for (const QString &entry : parser.values(allowOption))
            options.allowlist.push_back(toStd(entry));
        if (parser.isSet(deadlineOption)) {
            bool ok = false;
            options.verify_deadline_ms = parser.value(deadlineOption).toInt(&ok);
            if (!ok || options.verify_deadline_ms <= 0) {
                std::fprintf(stderr, "urlguard-browser: --verify-deadline-ms needs a positive number\n");
                return 2;
            }
        }
        options.verify = !parser.isSet(noVerifyOption);
        options.ca_bundle = toNativePath(parser.value(caBundleOption));
    } else if (parser.isSet(snapshotOption)) {
        const QStringList paths = parser.values(snapshotOption);
        if (paths.size() == 1 && QFileInfo(paths.first()).isDir()) {
            source.kind = ListSource::Kind::SnapshotDirectory;
            source.directory = paths.first();
        } else {
            source.kind = ListSource::Kind::SnapshotFiles;
            source.snapshots = paths;
        }
    }

    Protection protection;
    QString error;
    if (!protection.setSource(source, &error)) {
        // The user asked for protection: running without it would mislead.
        std::fprintf(stderr, "urlguard-browser: cannot open the lists: %s\n", qPrintable(error));
        return 1;
    }
    if (source.kind == ListSource::Kind::None)
        std::fprintf(stderr, "urlguard-browser: no --data-dir or --snapshot: browsing is NOT protected\n");
    else if (!protection.isProtecting())
        std::fprintf(stderr, "urlguard-browser: the data directory has no lists installed yet\n");

    // A data directory has a client that verifies; snapshot files have nobody to ask.
    std::unique_ptr<Verifier> verifier;
    if (source.kind == ListSource::Kind::DataDirectory)
        verifier = std::make_unique<ClientVerifier>(&protection);
    else
        verifier = std::make_unique<LocalOnlyVerifier>();
    // Destroyed before the objects above and after the window below (pages must go before their profile).
    QWebEngineProfile profile(QStringLiteral("urlguard-browser"));
    installGuard(&profile, &protection, verifier.get());

    BrowserWindow window(&profile, &protection, verifier.get());
    window.resize(1280, 800);
    window.show();
    const QStringList positional = parser.positionalArguments();
    window.load(positional.isEmpty() ? QUrl(QStringLiteral("about:blank"))
                                     : QUrl::fromUserInput(positional.first(), QDir::currentPath()));
    return app.exec();
}
