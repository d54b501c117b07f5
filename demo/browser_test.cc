// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// End-to-end tests of urlguard-browser: a real QtWebEngine (headless, QT_QPA_PLATFORM=offscreen), a real HTTP
// server on 127.0.0.1 (cpp-httplib, port 0) that records every request it receives, and real lists built at
// test time by urlguard-publish from fixtures/lists/*.txt. Chromium resolves every host name to 127.0.0.1
// (--host-resolver-rules), so "evil.example" is the local server and nothing leaves the machine.
//
// The data-directory tests run the whole living stack on loopback: a signed repository written in-process by
// the real publisher (include/urlguard/publish.h, at a high false-positive rate so filter false positives are
// easy to find), served by the reference server (include/urlguard/server.h) with its verify API, and the
// browser's urlguard::Client syncing from it ("Sync now") and verifying hits (ClientVerifier). Like the
// browser itself, the test uses the public API only (tests/public_headers_only_test.sh).
//
// Each test asserts both sides: what the browser shows, and what the server did (or did not) receive.
// Screenshots of a clean page and of the warning pages are written to URLGUARD_SCREENSHOT_DIR.
#include <httplib.h>

#include <QApplication>
#include <QBuffer>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QWebEnginePage>
#include <QWebEngineProfile>
#include <QWebEngineView>
#include <QtTest>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "browser_window.h"
#include "protection.h"
#include "protection_panel.h"
#include "request_guard.h"
#include "urlguard/client.h"
#include "urlguard/publish.h"
#include "urlguard/server.h"
#include "verifier.h"
#include "warning_page.h"

namespace {

constexpr int kLoadTimeoutMs = 60000; // a failure guard only: nothing here measures time

// The repository's lists: a high per-URL false-positive rate, so that clean URLs with a local hit are easy to
// find, and a threat type that differs from the list name, so the warning shows it came from verification.
constexpr double kRepoFpRate = 0.3;
constexpr char kRepoThreat[] = "social_engineering";
// How many generated clean host names a test tries to find one local false positive (at kRepoFpRate the
// chance that none of them hits is about 0.7^2000).
constexpr int kMaxFalsePositiveTries = 2000;
// The short-lived list of staleListIsShown expires this long after publishing: long enough to be installed,
// short enough to wait for.
constexpr int64_t kShortExpirySeconds = 8;

// The warning page's background (warning_page.cc), to tell a rendered warning from a blank grab.
const QColor kWarningRed(0xa8, 0x20, 0x1a);

// An address urlguard calls invalid but Chromium and the server accept: each round of percent-unescaping
// turns "%2525..." into "%25...", so it does not settle within urlguard's 1024 rounds (url/url_canon.h).
QByteArray unescapeBombPath()
{
    return QByteArray("/bomb/%") + QByteArray("25").repeated(1100);
}

QByteArray onePixelPng()
{
    QImage image(1, 1, QImage::Format_ARGB32);
    image.fill(Qt::green);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return png;
}

int countPixels(const QImage &image, const std::function<bool(QRgb)> &match)
{
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    int n = 0;
    for (int y = 0; y < rgb.height(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(rgb.constScanLine(y));
        for (int x = 0; x < rgb.width(); ++x)
            n += match(line[x]) ? 1 : 0;
    }
    return n;
}

bool near(QRgb p, const QColor &c)
{
    return qAbs(qRed(p) - c.red()) < 12 && qAbs(qGreen(p) - c.green()) < 12 && qAbs(qBlue(p) - c.blue()) < 12;
}

// A loopback HTTP server that serves the test pages and records the target of every request it receives.
class TestServer
{
public:
    bool start()
    {
        m_png = onePixelPng().toStdString();
        // Recorded before routing, so before any response is sent: once a client has its answer, saw() knows
        // the request (a logger runs after the response is written, which raced with the checks).
        m_server.set_pre_routing_handler([this](const httplib::Request &req, httplib::Response &) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_targets.push_back(req.get_header_value("Host") + " " + req.target);
            return httplib::Server::HandlerResponse::Unhandled;
        });
        m_server.Get(".*", [this](const httplib::Request &req, httplib::Response &res) { serve(req, res); });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        if (m_port <= 0)
            return false;
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        return true;
    }
    void stop()
    {
        m_server.stop();
        if (m_thread.joinable())
            m_thread.join();
    }
    int port() const { return m_port; }
    QUrl url(const char *host, const QByteArray &path) const
    {
        return QUrl::fromEncoded(QByteArray("http://") + host + ':' + QByteArray::number(m_port) + path,
                                 QUrl::StrictMode);
    }
    // True when some request's target starts with `targetPrefix` (the host is not compared).
    bool saw(const std::string &targetPrefix) const
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const std::string &t : m_targets) {
            const size_t space = t.find(' ');
            if (t.compare(space + 1, targetPrefix.size(), targetPrefix) == 0)
                return true;
        }
        return false;
    }
    void clearLog()
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_targets.clear();
    }

private:
    std::string page(const std::string &title, const std::string &body) const
    {
        return "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + title
                + "</title></head><body><h1>" + title + "</h1>" + body + "</body></html>";
    }
    std::string abs(const char *host, const std::string &path) const
    {
        return "http://" + std::string(host) + ":" + std::to_string(m_port) + path;
    }
    void serve(const httplib::Request &req, httplib::Response &res)
    {
        const std::string &p = req.path;
        if (p == "/clean.html") {
            res.set_content(page("Clean page", "<p>Nothing on this page is listed.</p>"), "text/html");
        } else if (p == "/evil.html" || p == "/other.html") {
            res.set_content(page("Evil page", "<p>This page is on the phishing list.</p>"), "text/html");
        } else if (p == "/mixed.html") {
            // A clean page with a listed image, a listed script and a listed frame, and one clean image.
            std::string body;
            body += "<img id=\"good\" src=\"" + abs("clean.example", "/good.png") + "\">";
            body += "<img id=\"bad\" src=\"" + abs("malware-cdn.example", "/bad.png") + "\">";
            body += "<script src=\"" + abs("malware-cdn.example", "/bad.js") + "\"></script>";
            body += "<iframe id=\"frame\" src=\"" + abs("evil.example", "/frame.html") + "\"></iframe>";
            res.set_content(page("Mixed page", body), "text/html");
        } else if (p == "/invalid-ref.html") {
            // A clean page referencing an image whose address urlguard calls invalid, and a clean control.
            std::string body = "<img id=\"control\" src=\"/control.png\">";
            body += "<img id=\"invalid\" src=\"" + unescapeBombPath().toStdString() + "\">";
            res.set_content(page("Invalid reference page", body), "text/html");
        } else if (p.size() > 4 && p.compare(p.size() - 4, 4, ".png") == 0) {
            res.set_content(m_png, "image/png");
        } else if (p.size() > 3 && p.compare(p.size() - 3, 3, ".js") == 0) {
            res.set_content("document.title = 'script ran';", "text/javascript");
        } else {
            res.set_content(page("Some page", "<p>" + std::to_string(p.size()) + " bytes of path</p>"),
                            "text/html");
        }
    }

    httplib::Server m_server;
    std::thread m_thread;
    int m_port = 0;
    std::string m_png;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_targets; // guarded by m_mutex: "host target" of every request received
};

// Records every loadFinished of a page from construction on, so a test cannot miss one.
class LoadWaiter
{
public:
    explicit LoadWaiter(QWebEnginePage *page) : m_page(page)
    {
        m_connection = QObject::connect(page, &QWebEnginePage::loadFinished,
                                        [this](bool) { m_urls.append(m_page->url()); });
    }
    ~LoadWaiter() { QObject::disconnect(m_connection); }

    // Spins the event loop until a finished load's URL satisfies `pred`.
    bool waitFor(const std::function<bool(const QUrl &)> &pred)
    {
        QDeadlineTimer deadline(kLoadTimeoutMs);
        while (!deadline.hasExpired()) {
            for (const QUrl &url : std::as_const(m_urls)) {
                if (pred(url))
                    return true;
            }
            QTest::qWait(20);
        }
        return false;
    }
    bool waitForUrl(const QUrl &url)
    {
        return waitFor([&url](const QUrl &u) { return u == url; });
    }
    bool waitForWarningPage()
    {
        return waitFor([](const QUrl &u) {
            return u.scheme() == QLatin1String(kUrlGuardScheme) && u.path() == QLatin1String("warning");
        });
    }

private:
    QWebEnginePage *m_page;
    QMetaObject::Connection m_connection;
    QList<QUrl> m_urls;
};

// Runs an asynchronous page query to completion (or returns an invalid QVariant after kLoadTimeoutMs).
QVariant runJavaScript(QWebEnginePage *page, const QString &script)
{
    auto result = std::make_shared<std::optional<QVariant>>();
    page->runJavaScript(script, [result](const QVariant &v) { *result = v; });
    QDeadlineTimer deadline(kLoadTimeoutMs);
    while (!result->has_value() && !deadline.hasExpired())
        QTest::qWait(10);
    return result->value_or(QVariant());
}

QString pageText(QWebEnginePage *page)
{
    return runJavaScript(page, QStringLiteral("document.body ? document.body.innerText : ''")).toString();
}

// A scripted verifier, to drive the Verifier seam with any answer: it answers what the test says,
// asynchronously, and counts its calls. (The browser ships ClientVerifier and LocalOnlyVerifier.)
class ScriptedVerifier : public Verifier
{
public:
    VerificationResult answer;
    int calls = 0;

    QString description() const override { return QStringLiteral("scripted test verifier"); }
    void verify(const QUrl &, const urlguard::Verdict &, Callback done) override
    {
        ++calls;
        QTimer::singleShot(10, this, [this, done] { done(answer); });
    }
};

// One browser: its own off-the-record profile, protection and window. Members are destroyed in reverse order:
// the window (and its page) before the profile, as Qt WebEngine requires.
struct Browser
{
    std::unique_ptr<Protection> protection = std::make_unique<Protection>();
    std::unique_ptr<Verifier> verifier;
    std::unique_ptr<QWebEngineProfile> profile = std::make_unique<QWebEngineProfile>();
    std::unique_ptr<BrowserWindow> window;

    explicit Browser(std::unique_ptr<Verifier> v = std::make_unique<LocalOnlyVerifier>())
        : verifier(std::move(v))
    {
        setUp();
    }
    // With the browser's own verifier for a data directory: a ClientVerifier on this browser's Protection.
    struct WithClientVerifier
    {
    };
    explicit Browser(WithClientVerifier) : verifier(std::make_unique<ClientVerifier>(protection.get()))
    {
        setUp();
    }
    QWebEnginePage *page() const { return window->page(); }
    template<typename T>
    T *find(const char *objectName) const
    {
        return window->findChild<T *>(QLatin1String(objectName));
    }

private:
    void setUp()
    {
        installGuard(profile.get(), protection.get(), verifier.get());
        window = std::make_unique<BrowserWindow>(profile.get(), protection.get(), verifier.get());
        window->resize(1280, 800);
        window->show();
    }
};

} // namespace

class BrowserTest : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();

    void cleanPageLoads();
    void listedPageShowsWarning();
    void proceedAnywayLoadsThePage();
    void backToSafetyReturns();
    void forgedProceedTokenIsRefused();
    void listedSubresourcesAreBlocked();
    void invalidUrlIsNeverRequested();
    void reloadListsPicksUpNewVersion();
    void verifierAnswersReachTheWarningPage();
    void internalSchemesAreNotChecked();

    void dataDirectorySourceIsChecked();
    void syncNowInstallsAndVerificationDecides();
    void unverifiedWhenVerificationIsUnavailable();
    void staleListIsShown();
    void clientVerifierMapsVerdicts();
    void clientVerifierGoneBeforeItsAnswers();

private:
    bool publish(const QString &list, const QStringList &inputs, const QString &out, int version);
    std::unique_ptr<Browser> protectedBrowser();
    void saveScreenshot(Browser &browser, const QString &name,
                        const std::function<bool(const QImage &)> &ready);

    // The signed repository and its reference server.
    bool publishToRepo(const std::string &list, int64_t expiresInSeconds);
    bool startRepoServer();
    // A browser on its own fresh data directory `name`, subscribed to `lists`, with the repository's server
    // and key unless `offline`, verifying with ClientVerifier.
    std::unique_ptr<Browser> clientBrowser(const QString &name, const std::vector<std::string> &lists,
                                           bool offline = false);
    // Presses "Sync now" and waits for the pass to finish (QVERIFY failures end the calling test too: check
    // QTest::currentTestFailed()).
    void syncWithButton(Browser &browser);
    // A clean URL of the test server whose local lookup says `kind`: kHit finds a filter false positive,
    // kSafe a plain miss. An empty QUrl when none of kMaxFalsePositiveTries generated host names does.
    QUrl findCleanUrl(const Browser &browser, urlguard::VerdictKind kind) const;

    TestServer m_server;
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_listDir;
    QString m_repoDir;
    std::string m_privateKeyPath; // empty until initTestCase generated the key pair
    std::string m_publicPem;
    std::unique_ptr<urlguard::Server> m_repoServer;
    std::string m_repoUrl;
};

bool BrowserTest::publish(const QString &list, const QStringList &inputs, const QString &out, int version)
{
    QStringList args = {
            QStringLiteral("build"),     QStringLiteral("--list"), list, QStringLiteral("--out"), out,
            QStringLiteral("--version"), QString::number(version)};
    for (const QString &input : inputs)
        args << QStringLiteral("--input") << input;
    QProcess process;
    process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    process.start(QStringLiteral(URLGUARD_PUBLISH_BIN), args);
    return process.waitForFinished(kLoadTimeoutMs) && process.exitStatus() == QProcess::NormalExit
            && process.exitCode() == 0;
}

void BrowserTest::initTestCase()
{
    QString base = qEnvironmentVariable("URLGUARD_TEST_TMPDIR", QDir::tempPath());
    QVERIFY(QDir().mkpath(base));
    m_tmp = std::make_unique<QTemporaryDir>(base + QStringLiteral("/browser_test-XXXXXX"));
    QVERIFY(m_tmp->isValid());
    m_listDir = m_tmp->filePath(QStringLiteral("lists"));
    QVERIFY(QDir().mkpath(m_listDir));
    const QString fixtures = QStringLiteral(URLGUARD_SOURCE_DIR "/fixtures/lists/");
    QVERIFY(publish(QStringLiteral("phishing"), {fixtures + QStringLiteral("phishing.txt")},
                    m_listDir + QStringLiteral("/phishing.ugs"), 1));
    QVERIFY(publish(QStringLiteral("malware"), {fixtures + QStringLiteral("malware.txt")},
                    m_listDir + QStringLiteral("/malware.ugs"), 1));
    QVERIFY(m_server.start());

    // The signed repository: list "phishing", version 1, served with its verify API.
    m_repoDir = m_tmp->filePath(QStringLiteral("repo"));
    urlguard::Result<urlguard::KeyPairFiles> keys =
            urlguard::GenerateKeyPair(m_tmp->filePath(QStringLiteral("keys")).toStdString());
    QVERIFY2(keys.ok(), keys.status().ToString().c_str());
    QFile publicKey(QString::fromStdString(keys->public_key_path));
    QVERIFY(publicKey.open(QIODevice::ReadOnly));
    m_publicPem = publicKey.readAll().toStdString();
    m_privateKeyPath = keys->private_key_path;
    QVERIFY(publishToRepo("phishing", 24 * 3600));
    QVERIFY(startRepoServer());
}

void BrowserTest::cleanupTestCase()
{
    if (m_repoServer)
        m_repoServer->Stop();
    m_server.stop();
}

bool BrowserTest::publishToRepo(const std::string &list, int64_t expiresInSeconds)
{
    urlguard::ListPublishOptions options;
    options.repo_dir = m_repoDir.toStdString();
    options.private_key_path = m_privateKeyPath;
    options.list = list;
    options.inputs = {"plain:" URLGUARD_SOURCE_DIR "/fixtures/lists/phishing.txt"};
    options.fp_rate = kRepoFpRate;
    options.default_threat = kRepoThreat;
    options.expires_in_seconds = expiresInSeconds;
    urlguard::Result<urlguard::ListPublishReport> report = urlguard::PublishList(options);
    if (!report.ok())
        qWarning("publish %s: %s", list.c_str(), report.status().ToString().c_str());
    return report.ok();
}

bool BrowserTest::startRepoServer()
{
    urlguard::ServerOptions options;
    options.repo_dir = m_repoDir.toStdString();
    options.listen = "127.0.0.1:0";
    urlguard::Result<std::unique_ptr<urlguard::Server>> server = urlguard::Server::Start(options);
    if (!server.ok()) {
        qWarning("repository server: %s", server.status().ToString().c_str());
        return false;
    }
    m_repoServer = std::move(server).value();
    m_repoUrl = "http://127.0.0.1:" + std::to_string(m_repoServer->port());
    return true;
}

std::unique_ptr<Browser> BrowserTest::clientBrowser(const QString &name,
                                                    const std::vector<std::string> &lists, bool offline)
{
    auto browser = std::make_unique<Browser>(Browser::WithClientVerifier {});
    ListSource source;
    source.kind = ListSource::Kind::DataDirectory;
    source.client.data_dir = m_tmp->filePath(QStringLiteral("data-") + name).toStdString();
    if (!offline) {
        source.client.server_url = m_repoUrl;
        source.client.public_key_pems = {m_publicPem};
    }
    source.client.lists = lists;
    source.client.verify_deadline_ms = 5000; // a failure guard: loopback answers (or refuses) at once
    QString error;
    if (!browser->protection->setSource(source, &error))
        qWarning("cannot open the data directory: %s", qPrintable(error));
    return browser;
}

void BrowserTest::syncWithButton(Browser &browser)
{
    auto *button = browser.find<QPushButton>("syncNowButton");
    QVERIFY(button);
    QVERIFY2(button->isEnabled(), qPrintable(button->toolTip()));
    QSignalSpy started(browser.protection.get(), &Protection::syncStarted);
    QSignalSpy finished(browser.protection.get(), &Protection::syncFinished);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(started.count(), 1);
    // One pass at a time: the button is off and a second start is refused until this one reports.
    QVERIFY(browser.protection->isSyncing());
    QVERIFY(!button->isEnabled());
    QCOMPARE(button->text(), QStringLiteral("Syncing..."));
    QVERIFY(!browser.protection->startSync());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kLoadTimeoutMs);
    QVERIFY(!browser.protection->isSyncing());
    QVERIFY(button->isEnabled());
    QCOMPARE(started.count(), 1);
}

QUrl BrowserTest::findCleanUrl(const Browser &browser, urlguard::VerdictKind kind) const
{
    for (int i = 0; i < kMaxFalsePositiveTries; ++i) {
        const QByteArray host = "clean" + QByteArray::number(i) + ".example.org";
        const QUrl url = m_server.url(host.constData(), "/clean.html");
        if (browser.protection->lookup(url).kind == kind)
            return url;
    }
    return QUrl();
}

void BrowserTest::init()
{
    m_server.clearLog();
    // A test that stops the repository server leaves it to the next one to start it again.
    if (!m_privateKeyPath.empty() && !m_repoServer)
        QVERIFY(startRepoServer());
}

std::unique_ptr<Browser> BrowserTest::protectedBrowser()
{
    auto browser = std::make_unique<Browser>();
    ListSource source;
    source.kind = ListSource::Kind::SnapshotDirectory;
    source.directory = m_listDir;
    QString error;
    if (!browser->protection->setSource(source, &error))
        qWarning("cannot open the test lists: %s", qPrintable(error));
    return browser;
}

void BrowserTest::saveScreenshot(Browser &browser, const QString &name,
                                 const std::function<bool(const QImage &)> &ready)
{
    // A load finishes before the compositor has painted it: wait until the view shows what the test expects.
    QTRY_VERIFY_WITH_TIMEOUT(ready(browser.window->view()->grab().toImage()), kLoadTimeoutMs);
    browser.window->panel()->refresh();
    const QString path = QStringLiteral(URLGUARD_SCREENSHOT_DIR "/") + name;
    QVERIFY2(browser.window->grab().save(path), qPrintable(path));
    qInfo("screenshot: %s", qPrintable(path));
}

void BrowserTest::cleanPageLoads()
{
    auto browser = protectedBrowser();
    QVERIFY(browser->protection->isProtecting());
    const QUrl url = m_server.url("clean.example", "/clean.html");
    LoadWaiter waiter(browser->page());
    browser->window->load(url);
    QVERIFY(waiter.waitForUrl(url));
    QCOMPARE(browser->page()->title(), QStringLiteral("Clean page"));
    QVERIFY(m_server.saw("/clean.html"));
    const ProtectionCounters &c = browser->protection->counters();
    QVERIFY(c.lookups >= 1);
    QCOMPARE(c.hits, 0u);
    QCOMPARE(c.warnings, 0u);
    QVERIFY(browser->window->findChild<QLabel *>(QStringLiteral("protectionStatus"))
                    ->text()
                    .contains(QStringLiteral("not listed")));

    saveScreenshot(*browser, QStringLiteral("browser-clean.png"), [](const QImage &image) {
        return countPixels(image, [](QRgb p) { return qGray(p) < 80; }) > 200; // the heading's text
    });
}

void BrowserTest::listedPageShowsWarning()
{
    auto browser = protectedBrowser();
    const QUrl url = m_server.url("evil.example", "/evil.html");
    LoadWaiter waiter(browser->page());
    browser->window->load(url);
    QVERIFY(waiter.waitForWarningPage());

    const QUrl shown = browser->page()->url();
    QCOMPARE(shown.scheme(), QStringLiteral("urlguard"));
    QCOMPARE(browser->window->addressBar()->text(), url.toString());
    const QString text = pageText(browser->page());
    QVERIFY2(text.contains(QStringLiteral("phishing")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("evil.example/")), qPrintable(text)); // the matched expression
    QVERIFY2(text.contains(QStringLiteral("domain")), qPrintable(text));        // the layer
    QVERIFY2(text.contains(QStringLiteral("unverified: local verdict only")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Back to safety")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Proceed anyway")), qPrintable(text));
    QVERIFY(browser->page()->title().contains(QStringLiteral("phishing")));
    QVERIFY2(!m_server.saw("/evil.html"), "the listed page was requested");
    QCOMPARE(browser->protection->counters().warnings, 1u);
    QCOMPARE(browser->protection->counters().hits, 1u);

    saveScreenshot(*browser, QStringLiteral("browser-warning.png"), [](const QImage &image) {
        // The red page, and its white parts (the icon, the "Back to safety" button, the text) painted too.
        return countPixels(image, [](QRgb p) { return near(p, kWarningRed); })
                > image.width() * image.height() / 2
                && countPixels(image, [](QRgb p) { return near(p, Qt::white); }) > 6000;
    });
}

void BrowserTest::proceedAnywayLoadsThePage()
{
    auto browser = protectedBrowser();
    const QUrl evil = m_server.url("evil.example", "/evil.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(evil);
        QVERIFY(waiter.waitForWarningPage());
    }
    QVERIFY(!m_server.saw("/evil.html"));
    {
        LoadWaiter waiter(browser->page());
        runJavaScript(browser->page(), QStringLiteral("document.getElementById('proceed').click(); true"));
        QVERIFY(waiter.waitForUrl(evil));
    }
    QCOMPARE(browser->page()->title(), QStringLiteral("Evil page"));
    QVERIFY(m_server.saw("/evil.html"));
    QCOMPARE(browser->protection->counters().proceeds, 1u);
    QVERIFY(browser->protection->isExempt(evil));

    // Remembered for the session: the same URL opens directly from now on...
    const QUrl clean = m_server.url("clean.example", "/clean.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(clean);
        QVERIFY(waiter.waitForUrl(clean));
    }
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(evil);
        QVERIFY(waiter.waitForUrl(evil));
    }
    QCOMPARE(browser->page()->title(), QStringLiteral("Evil page"));
    QCOMPARE(browser->protection->counters().warnings, 1u);
    // ...but only that URL: another listed URL on the same host warns again.
    const QUrl other = m_server.url("evil.example", "/other.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(other);
        QVERIFY(waiter.waitForWarningPage());
    }
    QVERIFY(!m_server.saw("/other.html"));
    QCOMPARE(browser->protection->counters().warnings, 2u);

    // A new session (a new Protection) has forgotten the proceed.
    auto fresh = protectedBrowser();
    LoadWaiter waiter(fresh->page());
    fresh->window->load(evil);
    QVERIFY(waiter.waitForWarningPage());
}

void BrowserTest::backToSafetyReturns()
{
    auto browser = protectedBrowser();
    const QUrl clean = m_server.url("clean.example", "/clean.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(clean);
        QVERIFY(waiter.waitForUrl(clean));
    }
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(m_server.url("evil.example", "/evil.html"));
        QVERIFY(waiter.waitForWarningPage());
    }
    LoadWaiter waiter(browser->page());
    runJavaScript(browser->page(), QStringLiteral("document.getElementById('back').click(); true"));
    QVERIFY(waiter.waitForUrl(clean));
    QCOMPARE(browser->page()->title(), QStringLiteral("Clean page"));
    QVERIFY(!m_server.saw("/evil.html"));
    QCOMPARE(browser->protection->counters().proceeds, 0u);
}

void BrowserTest::forgedProceedTokenIsRefused()
{
    auto browser = protectedBrowser();
    const QUrl evil = m_server.url("evil.example", "/evil.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(evil);
        QVERIFY(waiter.waitForWarningPage());
    }
    // A page (or a person) guessing a token gets an explanation, not the listed page.
    const QUrl forged(QStringLiteral("urlguard:proceed?token=00112233445566778899aabbccddeeff"));
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(forged);
        QVERIFY(waiter.waitForUrl(forged));
    }
    QVERIFY(pageText(browser->page()).contains(QStringLiteral("This warning has expired")));
    QVERIFY(!m_server.saw("/evil.html"));
    QCOMPARE(browser->protection->counters().proceeds, 0u);
    QVERIFY(!browser->protection->isExempt(evil));

    // A token is single-use.
    const QString token = browser->protection->issueProceedToken(evil, browser->protection->lookup(evil));
    QCOMPARE(browser->protection->redeemProceedToken(token), evil);
    QCOMPARE(browser->protection->redeemProceedToken(token), QUrl());
}

void BrowserTest::listedSubresourcesAreBlocked()
{
    auto browser = protectedBrowser();
    const QUrl url = m_server.url("clean.example", "/mixed.html");
    LoadWaiter waiter(browser->page());
    browser->window->load(url);
    QVERIFY(waiter.waitForUrl(url));
    QCOMPARE(browser->page()->title(), QStringLiteral("Mixed page")); // and the listed script did not run

    const ProtectionCounters &c = browser->protection->counters();
    // The listed image, script and frame; Chromium may ask twice for one (preload scanner), never less.
    QVERIFY2(c.blockedSubresources >= 3, qPrintable(QString::number(c.blockedSubresources)));
    QCOMPARE(c.warnings, 0u);
    QVERIFY(m_server.saw("/good.png"));
    QVERIFY(!m_server.saw("/bad.png"));
    QVERIFY(!m_server.saw("/bad.js"));
    QVERIFY(!m_server.saw("/frame.html"));
    QTRY_COMPARE_WITH_TIMEOUT(
            runJavaScript(browser->page(), QStringLiteral("document.getElementById('good').naturalWidth"))
                    .toInt(),
            1, kLoadTimeoutMs);
    QCOMPARE(runJavaScript(browser->page(), QStringLiteral("document.getElementById('bad').naturalWidth"))
                     .toInt(),
             0);

    // The panel shows the same numbers.
    browser->window->panel()->refresh();
    QCOMPARE(browser->window->findChild<QLabel *>(QStringLiteral("blockedSubresources"))->text(),
             QLocale().toString(c.blockedSubresources));
    auto *lists = browser->window->findChild<QTreeWidget *>(QStringLiteral("listsView"));
    QCOMPARE(lists->topLevelItemCount(), 2);
    QCOMPARE(lists->topLevelItem(0)->text(0), QStringLiteral("malware")); // OpenDirectory sorts by file name
    QCOMPARE(lists->topLevelItem(1)->text(0), QStringLiteral("phishing"));
    QCOMPARE(lists->topLevelItem(1)->text(1), QStringLiteral("1"));
}

void BrowserTest::invalidUrlIsNeverRequested()
{
    // Control: the server does record such a request when someone sends it.
    {
        httplib::Client client("127.0.0.1", m_server.port());
        auto res = client.Get(unescapeBombPath().toStdString());
        QVERIFY(res);
        QCOMPARE(res->status, 200);
        QVERIFY(m_server.saw("/bomb/"));
        m_server.clearLog();
    }

    auto browser = protectedBrowser();
    // As a subresource of a clean page: blocked, while the page and its clean image load.
    const QUrl page = m_server.url("clean.example", "/invalid-ref.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(page);
        QVERIFY(waiter.waitForUrl(page));
    }
    QCOMPARE(browser->page()->title(), QStringLiteral("Invalid reference page"));
    QTRY_COMPARE_WITH_TIMEOUT(
            runJavaScript(browser->page(), QStringLiteral("document.getElementById('control').naturalWidth"))
                    .toInt(),
            1, kLoadTimeoutMs);
    QVERIFY(m_server.saw("/control.png"));
    QVERIFY2(!m_server.saw("/bomb/"), "an invalid address reached the server");
    QVERIFY(browser->protection->counters().blockedInvalid >= 1);

    // As a main frame: an explanation page instead, without "Proceed anyway".
    const QUrl direct = m_server.url("clean.example", unescapeBombPath());
    QVERIFY(direct.isValid());
    const quint64 before = browser->protection->counters().blockedInvalid;
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(direct);
        QVERIFY(waiter.waitForWarningPage());
    }
    const QString text = pageText(browser->page());
    QVERIFY2(text.contains(QStringLiteral("Not a valid address")), qPrintable(text));
    QVERIFY(runJavaScript(browser->page(), QStringLiteral("document.getElementById('proceed') === null"))
                    .toBool());
    QVERIFY2(!m_server.saw("/bomb/"), "an invalid address reached the server");
    QCOMPARE(browser->protection->counters().blockedInvalid, before + 1);
}

void BrowserTest::reloadListsPicksUpNewVersion()
{
    // A data directory of its own, holding phishing version 1.
    const QString dir = m_tmp->filePath(QStringLiteral("reload"));
    QVERIFY(QDir().mkpath(dir));
    const QString fixtures = QStringLiteral(URLGUARD_SOURCE_DIR "/fixtures/lists/");
    QVERIFY(publish(QStringLiteral("phishing"), {fixtures + QStringLiteral("phishing.txt")},
                    dir + QStringLiteral("/phishing.ugs"), 1));
    auto browser = std::make_unique<Browser>();
    ListSource source;
    source.kind = ListSource::Kind::SnapshotDirectory;
    source.directory = dir;
    QString error;
    QVERIFY2(browser->protection->setSource(source, &error), qPrintable(error));

    const QUrl url = m_server.url("newly-listed.example", "/clean.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(url);
        QVERIFY(waiter.waitForUrl(url));
    }
    QVERIFY(m_server.saw("/clean.html"));
    m_server.clearLog();

    // Another tool publishes version 2 with one more entry (urlguard-publish replaces the file atomically).
    const QString extra = m_tmp->filePath(QStringLiteral("extra.txt"));
    {
        QFile f(extra);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("newly-listed.example\n");
    }
    QVERIFY(publish(QStringLiteral("phishing"), {fixtures + QStringLiteral("phishing.txt"), extra},
                    dir + QStringLiteral("/phishing.ugs"), 2));
    QCOMPARE(browser->protection->lists().at(0).version, 1u); // nothing changes until the user reloads

    auto *button = browser->window->findChild<QPushButton *>(QStringLiteral("reloadListsButton"));
    QVERIFY(button && button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(browser->protection->lists().at(0).version, 2u);
    auto *lists = browser->window->findChild<QTreeWidget *>(QStringLiteral("listsView"));
    QCOMPARE(lists->topLevelItem(0)->text(1), QStringLiteral("2"));
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(url);
        QVERIFY(waiter.waitForWarningPage());
    }
    QVERIFY(!m_server.saw("/clean.html"));

    // A broken file in the directory: the reload fails, says why, and version 2 stays in use.
    {
        QFile f(dir + QStringLiteral("/zz-broken.ugs"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a snapshot");
    }
    QTest::mouseClick(button, Qt::LeftButton);
    auto *message = browser->window->findChild<QLabel *>(QStringLiteral("reloadMessage"));
    QVERIFY2(message->text().contains(QStringLiteral("zz-broken.ugs")), qPrintable(message->text()));
    QVERIFY(browser->protection->isProtecting());
    QCOMPARE(browser->protection->lists().at(0).version, 2u);
}

void BrowserTest::verifierAnswersReachTheWarningPage()
{
    const QUrl evil = m_server.url("evil.example", "/evil.html");
    auto makeBrowser = [this](VerificationResult answer, ScriptedVerifier **out) {
        auto verifier = std::make_unique<ScriptedVerifier>();
        verifier->answer = std::move(answer);
        *out = verifier.get();
        auto browser = std::make_unique<Browser>(std::move(verifier));
        ListSource source;
        source.kind = ListSource::Kind::SnapshotDirectory;
        source.directory = m_listDir;
        QString error;
        if (!browser->protection->setSource(source, &error))
            qWarning("%s", qPrintable(error));
        return browser;
    };

    // The page waits for the (asynchronous) answer and shows it.
    ScriptedVerifier *verifier = nullptr;
    auto confirmed = makeBrowser(
            {VerificationResult::State::Confirmed, QStringLiteral("confirmed by the test"), {}, {}},
            &verifier);
    {
        LoadWaiter waiter(confirmed->page());
        confirmed->window->load(evil);
        QVERIFY(waiter.waitForWarningPage());
    }
    QCOMPARE(verifier->calls, 1);
    const QString text = pageText(confirmed->page());
    QVERIFY2(text.contains(QStringLiteral("confirmed by the test")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("false positive")), qPrintable(text));

    // A false positive: the page loads after all, and stays allowed for the session.
    auto falsePositive = makeBrowser(
            {VerificationResult::State::FalsePositive, QStringLiteral("no full hash"), {}, {}}, &verifier);
    {
        LoadWaiter waiter(falsePositive->page());
        falsePositive->window->load(evil);
        QVERIFY(waiter.waitForUrl(evil));
    }
    QCOMPARE(falsePositive->page()->title(), QStringLiteral("Evil page"));
    QCOMPARE(falsePositive->protection->counters().verifiedFalsePositives, 1u);
    QCOMPARE(falsePositive->protection->counters().proceeds, 0u);
    QCOMPARE(verifier->calls, 1);
}

void BrowserTest::internalSchemesAreNotChecked()
{
    QVERIFY(Protection::isInternalScheme(QStringLiteral("data")));
    QVERIFY(Protection::isInternalScheme(QStringLiteral("BLOB")));
    QVERIFY(!Protection::isInternalScheme(QStringLiteral("http")));
    QVERIFY(!Protection::isInternalScheme(QStringLiteral("wss")));

    auto browser = protectedBrowser();
    LoadWaiter waiter(browser->page());
    const QUrl data(QStringLiteral("data:text/html,<title>Data page</title><p>inline</p>"));
    browser->page()->setUrl(data);
    QVERIFY(waiter.waitFor([](const QUrl &u) { return u.scheme() == QLatin1String("data"); }));
    QCOMPARE(browser->page()->title(), QStringLiteral("Data page"));
    QCOMPARE(browser->protection->counters().blockedInvalid, 0u);
    QCOMPARE(browser->protection->counters().lookups, 0u);
}

void BrowserTest::dataDirectorySourceIsChecked()
{
    // A directory of bare snapshot files is not a data directory: refused, pointing at --snapshot.
    {
        Protection protection;
        ListSource source;
        source.kind = ListSource::Kind::DataDirectory;
        source.client.data_dir = m_listDir.toStdString();
        QString error;
        QVERIFY(!protection.setSource(source, &error));
        QVERIFY2(error.contains(QStringLiteral("--snapshot")), qPrintable(error));
        QVERIFY(!protection.client());
    }

    // A fresh data directory without a server: open (not protecting yet), and nothing can sync it.
    auto offline = clientBrowser(QStringLiteral("offline"), {"phishing"}, /*offline=*/true);
    QVERIFY(offline->protection->client());
    QVERIFY(QFileInfo(m_tmp->filePath(QStringLiteral("data-offline"))).isDir());
    QVERIFY(!offline->protection->isProtecting());
    QVERIFY(!offline->protection->canSync());
    QVERIFY(!offline->protection->startSync());
    auto *button = offline->find<QPushButton>("syncNowButton");
    QVERIFY(button);
    QVERIFY(!button->isEnabled());
    QVERIFY2(button->toolTip().contains(QStringLiteral("--server")), qPrintable(button->toolTip()));
    QVERIFY(offline->find<QLabel>("stateLabel")->text().contains(QStringLiteral("no list is installed")));
    QVERIFY(offline->verifier->description().contains(QStringLiteral("without a verification server")));

    // Snapshot files have no client: no "Sync now", and hits stay local.
    auto snapshots = protectedBrowser();
    QVERIFY(!snapshots->protection->client());
    QVERIFY(!snapshots->protection->canSync());
    QVERIFY(snapshots->find<QPushButton>("syncNowButton")->isHidden());
}

void BrowserTest::syncNowInstallsAndVerificationDecides()
{
    auto browser = clientBrowser(QStringLiteral("verify"), {"phishing"});
    QVERIFY(browser->protection->client());
    QVERIFY(!browser->protection->isProtecting()); // a fresh data directory: nothing installed yet
    auto *lists = browser->find<QTreeWidget>("listsView");
    // The subscribed list is shown before it is installed: version "none", state "missing" (stale).
    QCOMPARE(lists->topLevelItemCount(), 1);
    QCOMPARE(lists->topLevelItem(0)->text(1), QStringLiteral("none"));
    QCOMPARE(lists->topLevelItem(0)->text(4), QStringLiteral("missing"));
    QVERIFY(browser->find<QLabel>("staleWarning")->text().contains(QStringLiteral("phishing is not installed")));

    // "Sync now" downloads the signed list from the repository server and installs it.
    syncWithButton(*browser);
    if (QTest::currentTestFailed())
        return;
    const SyncRun &run = browser->protection->lastSync();
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(run.reports.size(), size_t {1});
    QCOMPARE(run.reports[0].list, std::string("phishing"));
    QVERIFY2(run.reports[0].result == urlguard::SyncResult::kUpdated, run.reports[0].error.c_str());
    QCOMPARE(run.reports[0].to_version, uint64_t {1});
    const QString message = browser->find<QLabel>("syncMessage")->text();
    QVERIFY2(message.contains(QStringLiteral("phishing: updated 0 to 1")), qPrintable(message));
    QVERIFY(browser->protection->isProtecting());
    QCOMPARE(browser->protection->listCount(), 1);
    QCOMPARE(lists->topLevelItemCount(), 1);
    QCOMPARE(lists->topLevelItem(0)->text(0), QStringLiteral("phishing"));
    QCOMPARE(lists->topLevelItem(0)->text(1), QStringLiteral("1"));
    QCOMPARE(lists->topLevelItem(0)->text(4), QStringLiteral("fresh"));
    const QString schedule = browser->find<QLabel>("syncStatus")->text();
    QVERIFY2(schedule.contains(QStringLiteral("phishing: last sync ok")), qPrintable(schedule));
    QVERIFY2(schedule.contains(QStringLiteral("next sync in")), qPrintable(schedule));
    QVERIFY(browser->find<QLabel>("staleWarning")->isHidden());

    // A clean address whose local lookup hits (a filter false positive): the interceptor stops it like any
    // hit, verification finds no full hash, and the page loads.
    const QUrl falsePositive = findCleanUrl(*browser, urlguard::VerdictKind::kHit);
    QVERIFY2(falsePositive.isValid(), "no local false positive among the generated clean URLs");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(falsePositive);
        QVERIFY(waiter.waitForUrl(falsePositive));
    }
    QCOMPARE(browser->page()->title(), QStringLiteral("Clean page"));
    QVERIFY(m_server.saw("/clean.html"));
    const ProtectionCounters &c = browser->protection->counters();
    QCOMPARE(c.warnings, 1u); // the hit did stop the navigation first
    QCOMPARE(c.verifiedFalsePositives, 1u);
    QCOMPARE(c.proceeds, 0u);
    QVERIFY(c.allowedAfterVerification >= 1); // the page (and any of its resources with the same match)
    QCOMPARE(c.allowedAfterProceed, 0u);
    const QString summary = browser->find<QLabel>("protectionStatus")->text();
    QVERIFY2(summary.contains(QStringLiteral("filter false positive")), qPrintable(summary));
    urlguard::ClientStats stats = browser->protection->clientStats();
    QCOMPARE(stats.by_verdict[static_cast<int>(urlguard::VerdictKind::kSafeVerified)], uint64_t {1});
    QCOMPARE(stats.verifications, uint64_t {1});
    QCOMPARE(stats.verification_failures, uint64_t {0});

    // A listed page: the warning, confirmed by the verification service, names the list and the threat.
    const QUrl evil = m_server.url("evil.example", "/evil.html");
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(evil);
        QVERIFY(waiter.waitForWarningPage());
    }
    const QString text = pageText(browser->page());
    QVERIFY2(text.contains(QStringLiteral("confirmed by the verification service")), qPrintable(text));
    QVERIFY2(text.contains(
                     QStringLiteral("on the list phishing as a %1 threat").arg(QLatin1String(kRepoThreat))),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Deceptive site ahead")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("evil.example/")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("unverified")), qPrintable(text));
    QVERIFY2(!m_server.saw("/evil.html"), "the listed page was requested");
    QCOMPARE(browser->protection->counters().warnings, 2u);
    stats = browser->protection->clientStats();
    QCOMPARE(stats.by_verdict[static_cast<int>(urlguard::VerdictKind::kMalicious)], uint64_t {1});
    QCOMPARE(stats.verifications, uint64_t {2});

    // The panel shows the client's counts.
    browser->window->panel()->refresh();
    QCOMPARE(browser->find<QLabel>("verifications")->text(), QLocale().toString(stats.verifications));
    QCOMPARE(browser->find<QLabel>("verificationFailures")->text(), QStringLiteral("0"));
    QCOMPARE(browser->find<QLabel>("verifiedFalsePositives")->text(), QStringLiteral("1"));
    QVERIFY(browser->find<QLabel>("verificationLabel")->text().contains(QString::fromStdString(m_repoUrl)));

    saveScreenshot(*browser, QStringLiteral("browser-warning-confirmed.png"), [](const QImage &image) {
        return countPixels(image, [](QRgb p) { return near(p, kWarningRed); })
                > image.width() * image.height() / 2
                && countPixels(image, [](QRgb p) { return near(p, Qt::white); }) > 6000;
    });

    // The false positive again: the result cache answers, without the network.
    const quint64 cacheHitsBefore = browser->protection->clientStats().cache_hits;
    const urlguard::Verdict again =
            browser->protection->client()->Check(falsePositive.toString().toStdString());
    QCOMPARE(again.kind, urlguard::VerdictKind::kSafeVerified);
    QVERIFY(again.from_cache);
    QCOMPARE(browser->protection->clientStats().cache_hits, cacheHitsBefore + 1);
}

void BrowserTest::unverifiedWhenVerificationIsUnavailable()
{
    auto browser = clientBrowser(QStringLiteral("unverified"), {"phishing"});
    // Synced through the browser's own client, as urlguardd would have done.
    urlguard::Result<std::vector<urlguard::SyncReport>> reports = browser->protection->client()->SyncNow();
    QVERIFY2(reports.ok(), reports.status().ToString().c_str());
    QCOMPARE(reports->size(), size_t {1});
    QVERIFY2((*reports)[0].result == urlguard::SyncResult::kUpdated, (*reports)[0].error.c_str());
    QString error;
    QVERIFY2(browser->protection->reload(&error), qPrintable(error));
    QVERIFY(browser->protection->isProtecting());
    const QUrl falsePositive = findCleanUrl(*browser, urlguard::VerdictKind::kHit);
    QVERIFY2(falsePositive.isValid(), "no local false positive among the generated clean URLs");

    // The verification server goes away: the hit cannot be decided, so the warning stays, and says why.
    m_repoServer.reset(); // stops it; init() starts it again (on a new port) for the next test
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(falsePositive);
        QVERIFY(waiter.waitForWarningPage());
    }
    QString text = pageText(browser->page());
    QVERIFY2(text.contains(QStringLiteral("unverified: verification is unavailable")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Proceed anyway")), qPrintable(text));
    QVERIFY2(!m_server.saw("/clean.html"), "an unverified hit was requested");
    QCOMPARE(browser->protection->counters().verifiedFalsePositives, 0u);
    urlguard::ClientStats stats = browser->protection->clientStats();
    QCOMPARE(stats.by_verdict[static_cast<int>(urlguard::VerdictKind::kUnverifiedHit)], uint64_t {1});
    QCOMPARE(stats.verification_failures, uint64_t {1});

    // A listed page is unverified too: still a warning, never a confirmation.
    {
        LoadWaiter waiter(browser->page());
        browser->window->load(m_server.url("evil.example", "/evil.html"));
        QVERIFY(waiter.waitFor([](const QUrl &u) {
            return u.scheme() == QLatin1String(kUrlGuardScheme) && u.query().contains(QStringLiteral("evil"));
        }));
    }
    text = pageText(browser->page());
    QVERIFY2(text.contains(QStringLiteral("unverified: verification is unavailable")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("confirmed")), qPrintable(text));
    QVERIFY(!m_server.saw("/evil.html"));

    // "Sync now" fails and says so per list; the installed version stays in use.
    syncWithButton(*browser);
    if (QTest::currentTestFailed())
        return;
    const SyncRun &run = browser->protection->lastSync();
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(run.reports.size(), size_t {1});
    QCOMPARE(run.reports[0].result, urlguard::SyncResult::kFailed);
    const QString message = browser->find<QLabel>("syncMessage")->text();
    QVERIFY2(message.contains(QStringLiteral("phishing: failed")), qPrintable(message));
    const QString schedule = browser->find<QLabel>("syncStatus")->text();
    QVERIFY2(schedule.contains(QStringLiteral("phishing: last sync failed")), qPrintable(schedule));
    QVERIFY2(schedule.contains(QStringLiteral("1 in a row")), qPrintable(schedule));
    QCOMPARE(browser->find<QTreeWidget>("listsView")->topLevelItem(0)->text(1), QStringLiteral("1"));
    QVERIFY(browser->protection->isProtecting());
}

void BrowserTest::staleListIsShown()
{
    // A list that expires soon after it is published: installed fresh, then past its signed expiry.
    QVERIFY(publishToRepo("shortlived", kShortExpirySeconds));
    auto browser = clientBrowser(QStringLiteral("stale"), {"shortlived"});
    syncWithButton(*browser);
    if (QTest::currentTestFailed())
        return;
    const SyncRun &run = browser->protection->lastSync();
    QVERIFY2(run.ok, qPrintable(run.error));
    QCOMPARE(run.reports.size(), size_t {1});
    QVERIFY2(run.reports[0].result == urlguard::SyncResult::kUpdated, run.reports[0].error.c_str());
    QVERIFY(browser->protection->isProtecting());

    // The panel (refreshed every second) warns once the expiry has passed, and names the list.
    auto *warning = browser->find<QLabel>("staleWarning");
    QTRY_VERIFY_WITH_TIMEOUT(!warning->isHidden(), kLoadTimeoutMs);
    QVERIFY2(warning->text().contains(QStringLiteral("shortlived is past its signed expiry")),
             qPrintable(warning->text()));
    QCOMPARE(browser->find<QTreeWidget>("listsView")->topLevelItem(0)->text(4), QStringLiteral("stale"));
    const std::vector<urlguard::ListStatus> status = browser->protection->listStatus();
    QCOMPARE(status.size(), size_t {1});
    QVERIFY(status[0].stale);

    // A "not listed" answer says it is not confident.
    const QUrl clean = findCleanUrl(*browser, urlguard::VerdictKind::kSafe);
    QVERIFY(clean.isValid());
    QVERIFY(browser->protection->lookup(clean).stale);
    LoadWaiter waiter(browser->page());
    browser->window->load(clean);
    QVERIFY(waiter.waitForUrl(clean));
    const QString summary = browser->find<QLabel>("protectionStatus")->text();
    QVERIFY2(summary.contains(QStringLiteral("past its expiry")), qPrintable(summary));
}

void BrowserTest::clientVerifierMapsVerdicts()
{
    urlguard::Verdict v;
    v.kind = urlguard::VerdictKind::kMalicious;
    v.list = "phishing";
    v.threat = "malware";
    VerificationResult r = ClientVerifier::resultFor(v);
    QCOMPARE(r.state, VerificationResult::State::Confirmed);
    QCOMPARE(r.list, QStringLiteral("phishing"));
    QCOMPARE(r.threat, QStringLiteral("malware"));
    QCOMPARE(r.detail, QStringLiteral("confirmed by the verification service"));
    v.from_cache = true;
    QCOMPARE(ClientVerifier::resultFor(v).detail,
             QStringLiteral("confirmed by the verification service (cached answer)"));
    v.emergency = true;
    QVERIFY(ClientVerifier::resultFor(v).detail.contains(QStringLiteral("emergency policy")));

    v = urlguard::Verdict();
    v.kind = urlguard::VerdictKind::kSafeVerified;
    QCOMPARE(ClientVerifier::resultFor(v).state, VerificationResult::State::FalsePositive);
    v.kind = urlguard::VerdictKind::kSafe;
    v.allowlisted = true;
    r = ClientVerifier::resultFor(v);
    QCOMPARE(r.state, VerificationResult::State::FalsePositive);
    QVERIFY(r.detail.contains(QStringLiteral("allowlist")));

    v = urlguard::Verdict();
    v.kind = urlguard::VerdictKind::kUnverifiedHit;
    v.error = "io error: connection refused";
    r = ClientVerifier::resultFor(v);
    QCOMPARE(r.state, VerificationResult::State::Unverified);
    QCOMPARE(r.detail,
             QStringLiteral("unverified: verification is unavailable (io error: connection refused)"));
    QVERIFY(r.list.isEmpty());
    // A local verdict never confirms anything.
    v.kind = urlguard::VerdictKind::kHit;
    QCOMPARE(ClientVerifier::resultFor(v).state, VerificationResult::State::Unverified);
}

void BrowserTest::clientVerifierGoneBeforeItsAnswers()
{
    // A synced data directory, no window: the verifier alone.
    Protection protection;
    ListSource source;
    source.kind = ListSource::Kind::DataDirectory;
    source.client.data_dir = m_tmp->filePath(QStringLiteral("data-relay")).toStdString();
    source.client.server_url = m_repoUrl;
    source.client.public_key_pems = {m_publicPem};
    source.client.lists = {"phishing"};
    source.client.verify_deadline_ms = 5000;
    QString error;
    QVERIFY2(protection.setSource(source, &error), qPrintable(error));
    urlguard::Result<std::vector<urlguard::SyncReport>> reports = protection.client()->SyncNow();
    QVERIFY2(reports.ok(), reports.status().ToString().c_str());
    const QUrl evil = m_server.url("evil.example", "/evil.html");
    const urlguard::Verdict local = protection.lookup(evil);
    QCOMPARE(local.kind, urlguard::VerdictKind::kHit);

    // Two verifications queued on the client's worker; one verifier is destroyed before the answers arrive.
    int goneCalls = 0;
    std::optional<VerificationResult> kept;
    auto gone = std::make_unique<ClientVerifier>(&protection);
    ClientVerifier stays(&protection);
    gone->verify(evil, local, [&goneCalls](const VerificationResult &) { ++goneCalls; });
    stays.verify(evil, local, [&kept](const VerificationResult &r) { kept = r; });
    QVERIFY(!kept.has_value()); // never from inside verify()
    gone.reset();
    QTRY_VERIFY_WITH_TIMEOUT(kept.has_value(), kLoadTimeoutMs);
    QCOMPARE(kept->state, VerificationResult::State::Confirmed);
    QCOMPARE(kept->threat, QLatin1String(kRepoThreat));
    QTest::qWait(50); // let anything (wrongly) posted to the destroyed verifier run
    QCOMPARE(goneCalls, 0);

    // Without a client (snapshot lists) the answer is "unverified", still asynchronous.
    Protection offline;
    ListSource files;
    files.kind = ListSource::Kind::SnapshotDirectory;
    files.directory = m_listDir;
    QVERIFY2(offline.setSource(files, &error), qPrintable(error));
    ClientVerifier noClient(&offline);
    std::optional<VerificationResult> answer;
    noClient.verify(evil, offline.lookup(evil), [&answer](const VerificationResult &r) { answer = r; });
    QVERIFY(!answer.has_value());
    QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), kLoadTimeoutMs);
    QCOMPARE(answer->state, VerificationResult::State::Unverified);
    QVERIFY2(answer->detail.contains(QStringLiteral("no verification client")), qPrintable(answer->detail));
}

int main(int argc, char *argv[])
{
    // Headless unless the caller chose otherwise (CTest sets the same).
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    if (qEnvironmentVariableIsEmpty("QTWEBENGINE_DISABLE_SANDBOX"))
        qputenv("QTWEBENGINE_DISABLE_SANDBOX", "1");

    // Every host name resolves to the loopback test server, and Chromium makes no requests of its own. (Qt
    // WebEngine splits this variable at spaces outside double quotes.)
    QByteArray flags = qgetenv("QTWEBENGINE_CHROMIUM_FLAGS");
    flags += " --host-resolver-rules=\"MAP * 127.0.0.1\" --disable-background-networking"
             " --disable-component-update --no-proxy-server";
    qputenv("QTWEBENGINE_CHROMIUM_FLAGS", flags);

    registerUrlGuardScheme();
    QApplication app(argc, argv);
    BrowserTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "browser_test.moc"
