// Copyright urlguard authors.
//
// End-to-end tests of urlguard-browser: a real QtWebEngine (headless, QT_QPA_PLATFORM=offscreen), a real HTTP
// server on 127.0.0.1 (cpp-httplib, port 0) that records every request it receives, and real lists built at
// test time by urlguard-publish from fixtures/lists/*.txt. Chromium resolves every host name to 127.0.0.1
// (--host-resolver-rules), so "evil.example" is the local server and nothing leaves the machine.
//
// Each test asserts both sides: what the browser shows, and what the server did (or did not) receive.
// Screenshots of a clean page and of the warning page are written to URLGUARD_SCREENSHOT_DIR.
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
#include "verifier.h"
#include "warning_page.h"

namespace {

constexpr int kLoadTimeoutMs = 60000; // a failure guard only: nothing here measures time

// The warning page's background (warning_page.cc), to tell a rendered warning from a blank grab.
const QColor kWarningRed(0xa8, 0x20, 0x1a);

// An address urlguard calls invalid but Chromium and the server accept: each round of percent-unescaping
// turns "%2525..." into "%25...", so it does not settle within urlguard's 1024 rounds (core/url_canon.h).
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
        m_server.set_logger([this](const httplib::Request &req, const httplib::Response &) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_targets.push_back(req.get_header_value("Host") + " " + req.target);
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

// A stand-in for the future verification client, to drive the Verifier seam: it answers what the test says,
// asynchronously, and counts its calls. (The browser itself ships only LocalOnlyVerifier.)
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
        installGuard(profile.get(), protection.get(), verifier.get());
        window = std::make_unique<BrowserWindow>(profile.get(), protection.get(), verifier.get());
        window->resize(1280, 800);
        window->show();
    }
    QWebEnginePage *page() const { return window->page(); }
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

private:
    bool publish(const QString &list, const QStringList &inputs, const QString &out, int version);
    std::unique_ptr<Browser> protectedBrowser();
    void saveScreenshot(Browser &browser, const QString &name,
                        const std::function<bool(const QImage &)> &ready);

    TestServer m_server;
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_listDir;
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
}

void BrowserTest::cleanupTestCase()
{
    m_server.stop();
}

void BrowserTest::init()
{
    m_server.clearLog();
}

std::unique_ptr<Browser> BrowserTest::protectedBrowser()
{
    auto browser = std::make_unique<Browser>();
    ListSource source;
    source.kind = ListSource::Kind::Directory;
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
    source.kind = ListSource::Kind::Directory;
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
        source.kind = ListSource::Kind::Directory;
        source.directory = m_listDir;
        QString error;
        if (!browser->protection->setSource(source, &error))
            qWarning("%s", qPrintable(error));
        return browser;
    };

    // The page waits for the (asynchronous) answer and shows it.
    ScriptedVerifier *verifier = nullptr;
    auto confirmed = makeBrowser(
            {VerificationResult::State::Confirmed, QStringLiteral("confirmed by the test")}, &verifier);
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
            {VerificationResult::State::FalsePositive, QStringLiteral("no full hash")}, &verifier);
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
