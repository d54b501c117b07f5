// Copyright urlguard authors.
//
// urlguard-browser: a small Qt 6 WebEngine browser protected by urlguard.
//
//   urlguard-browser [--data-dir DIR | --snapshot FILE...] [URL]
//
// Every request of the browser goes through the local urlguard lists; a listed page shows a warning instead,
// listed images, scripts and frames are blocked. Exit status: 0 normal, 1 the lists could not be opened,
// 2 bad usage.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QWebEngineProfile>
#include <cstdio>

#include "browser_window.h"
#include "protection.h"
#include "request_guard.h"
#include "verifier.h"
#include "warning_page.h"

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
    const QCommandLineOption dataDirOption(QStringLiteral("data-dir"),
                                           QApplication::translate("main", "Open every *.ugs list in <dir>."),
                                           QStringLiteral("dir"));
    const QCommandLineOption snapshotOption(
            QStringLiteral("snapshot"), QApplication::translate("main", "Open the list <file> (repeatable)."),
            QStringLiteral("file"));
    parser.addOption(dataDirOption);
    parser.addOption(snapshotOption);
    parser.addPositionalArgument(QStringLiteral("url"), QApplication::translate("main", "The page to open."),
                                 QStringLiteral("[url]"));
    parser.process(app);

    ListSource source;
    if (parser.isSet(dataDirOption) && parser.isSet(snapshotOption)) {
        std::fprintf(stderr, "urlguard-browser: give --data-dir or --snapshot, not both\n");
        return 2;
    }
    if (parser.positionalArguments().size() > 1) {
        std::fprintf(stderr, "urlguard-browser: at most one URL\n");
        return 2;
    }
    if (parser.isSet(dataDirOption)) {
        source.kind = ListSource::Kind::Directory;
        source.directory = parser.value(dataDirOption);
    } else if (parser.isSet(snapshotOption)) {
        source.kind = ListSource::Kind::Files;
        source.snapshots = parser.values(snapshotOption);
    }

    Protection protection;
    QString error;
    if (!protection.setSource(source, &error)) {
        // The user asked for protection: running without it would mislead.
        std::fprintf(stderr, "urlguard-browser: cannot open the lists: %s\n", qPrintable(error));
        return 1;
    }
    if (!protection.isProtecting())
        std::fprintf(stderr, "urlguard-browser: no --data-dir or --snapshot: browsing is NOT protected\n");

    LocalOnlyVerifier verifier;
    // Destroyed before the objects above and after the window below (pages must go before their profile).
    QWebEngineProfile profile(QStringLiteral("urlguard-browser"));
    installGuard(&profile, &protection, &verifier);

    BrowserWindow window(&profile, &protection, &verifier);
    window.resize(1280, 800);
    window.show();
    const QStringList positional = parser.positionalArguments();
    window.load(positional.isEmpty() ? QUrl(QStringLiteral("about:blank"))
                                     : QUrl::fromUserInput(positional.first(), QDir::currentPath()));
    return app.exec();
}
