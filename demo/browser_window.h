// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// BrowserWindow: the demo browser's main window — back, forward, reload, an address bar, the page
// (QWebEngineView), a status bar that says what urlguard decided for the current page, and the protection
// panel.
//
// The window does not check anything itself: the profile's RequestGuard does (installGuard()), so every
// request of every page of the profile is covered, whatever started it.
//
// Thread safety: UI thread.
#ifndef URLGUARD_DEMO_BROWSER_WINDOW_H_
#define URLGUARD_DEMO_BROWSER_WINDOW_H_

#include <QMainWindow>
#include <QPointer>
#include <QUrl>

class QLabel;
class QLineEdit;
class QWebEnginePage;
class QWebEngineProfile;
class QWebEngineView;
class Protection;
class ProtectionPanel;
class Verifier;

class BrowserWindow : public QMainWindow
{
    Q_OBJECT
public:
    // `profile` (with installGuard() done), `protection` and `verifier` must outlive the window. The window's
    // page belongs to `profile`.
    BrowserWindow(QWebEngineProfile *profile, Protection *protection, Verifier *verifier,
                  QWidget *parent = nullptr);
    ~BrowserWindow() override;

    QWebEngineView *view() const { return m_view; }
    QWebEnginePage *page() const;
    ProtectionPanel *panel() const { return m_panel; }
    QLineEdit *addressBar() const { return m_address; }

    // The text the address bar shows for `url`: on a warning page, the address it warns about.
    static QString displayUrl(const QUrl &url);

public slots:
    void load(const QUrl &url);

private slots:
    void navigateToAddressBar();
    void updateAddress(const QUrl &url);
    void updateTitle(const QString &title);
    void showProtectionSummary(const QUrl &url, const QString &summary);

private:
    QWebEngineView *m_view = nullptr;
    QLineEdit *m_address = nullptr;
    QLabel *m_protectionLabel = nullptr;
    ProtectionPanel *m_panel = nullptr;
};

#endif // URLGUARD_DEMO_BROWSER_WINDOW_H_
