/* html_report.h - graft's --html: the HTML audit report, made by the
 * graft-html program (see graft_html.c) from a JSON audit. */
#ifndef GRAFT_HTML_REPORT_H
#define GRAFT_HTML_REPORT_H

#include "runtime/engine/audit.h"

/* graft explain REPORT.json --html OUT.html: render an existing audit. */
bool html_render(const char *report_json, const char *html, Diag *d);
/* graft optimize --html OUT.html: the audit as --report writes it (to
 * report if given, else to a temporary file), then rendered. */
bool html_write_report(const char *html, const char *report, const char *input, const char *output,
                       const AuditHist *before, const AuditHist *after, const RwRuleSet *const *sets, int nsets,
                       const RwResult *r, Diag *d);

#endif
