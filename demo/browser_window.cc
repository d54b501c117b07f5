// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "browser_window.h"

#include <QAction>
#include <QLabel>
#include <QLineEdit>
#include <QStatusBar>
#include <QToolBar>
#include <QUrlQuery>
#include <QWebEnginePage>
#include <QWebEngineProfile>
#include <QWebEngineView>

#include "protection.h"
#include "protection_panel.h"

BrowserWindow::BrowserWindow(QWebEngineProfile *profile, Protection *protection, Verifier *verifier,
                             QWidget *parent)
    : QMainWindow(parent)
{
    setWindowTitle(tr("urlguard browser"));

    m_view = new QWebEngineView(this);
    m_view->setPage(new QWebEnginePage(profile, m_view));
    setCentralWidget(m_view);

    auto *toolBar = addToolBar(tr("Navigation"));
    toolBar->setObjectName(QStringLiteral("navigationToolBar"));
    toolBar->setMovable(false);
    QAction *back = m_view->pageAction(QWebEnginePage::Back);
    back->setShortcut(QKeySequence::Back);
    QAction *forward = m_view->pageAction(QWebEnginePage::Forward);
    forward->setShortcut(QKeySequence::Forward);
    QAction *reload = m_view->pageAction(QWebEnginePage::Reload);
    reload->setShortcut(QKeySequence::Refresh);
    toolBar->addAction(back);
    toolBar->addAction(forward);
    toolBar->addAction(reload);

    m_address = new QLineEdit(toolBar);
    m_address->setObjectName(QStringLiteral("addressBar"));
    m_address->setPlaceholderText(tr("Address"));
    m_address->setClearButtonEnabled(true);
    toolBar->addWidget(m_address);
    connect(m_address, &QLineEdit::returnPressed, this, &BrowserWindow::navigateToAddressBar);

    m_protectionLabel = new QLabel(this);
    m_protectionLabel->setObjectName(QStringLiteral("protectionStatus"));
    statusBar()->addPermanentWidget(m_protectionLabel);

    m_panel = new ProtectionPanel(protection, verifier, this);
    addDockWidget(Qt::RightDockWidgetArea, m_panel);

    connect(m_view, &QWebEngineView::urlChanged, this, &BrowserWindow::updateAddress);
    connect(m_view, &QWebEngineView::titleChanged, this, &BrowserWindow::updateTitle);
    connect(m_view->page(), &QWebEnginePage::linkHovered, this,
            [this](const QString &url) { statusBar()->showMessage(url); });
    connect(m_view, &QWebEngineView::loadProgress, this, [this](int progress) {
        if (progress < 100)
            statusBar()->showMessage(tr("Loading... %1%").arg(progress));
        else
            statusBar()->clearMessage();
    });
    // With several windows on one profile this shows the most recent top-level decision of any of them.
    connect(protection, &Protection::mainFrameChecked, this, &BrowserWindow::showProtectionSummary);
    if (!protection->isProtecting())
        m_protectionLabel->setText(tr("Not protected: no lists are loaded"));
}

BrowserWindow::~BrowserWindow() = default;

QWebEnginePage *BrowserWindow::page() const
{
    return m_view->page();
}

QString BrowserWindow::displayUrl(const QUrl &url)
{
    if (url.scheme() == QLatin1String(kUrlGuardScheme) && url.path() == QLatin1String("warning")) {
        const QString shown = QUrlQuery(url).queryItemValue(QStringLiteral("url"), QUrl::FullyDecoded);
        if (!shown.isEmpty())
            return shown;
    }
    return url.toDisplayString();
}

void BrowserWindow::load(const QUrl &url)
{
    m_address->setText(displayUrl(url));
    m_view->setUrl(url);
    m_view->setFocus();
}

void BrowserWindow::navigateToAddressBar()
{
    const QUrl url = QUrl::fromUserInput(m_address->text().trimmed());
    if (url.isValid())
        load(url);
}

void BrowserWindow::updateAddress(const QUrl &url)
{
    m_address->setText(displayUrl(url));
}

void BrowserWindow::updateTitle(const QString &title)
{
    setWindowTitle(title.isEmpty() ? tr("urlguard browser") : tr("%1 - urlguard browser").arg(title));
}

void BrowserWindow::showProtectionSummary(const QUrl &url, const QString &summary)
{
    m_protectionLabel->setText(summary);
    m_protectionLabel->setToolTip(url.toDisplayString());
}
