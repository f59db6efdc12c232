/* html_report.c - graft's --html: runs graft-html (a separate, dynamically
 * linked program: Graphviz loads its plugins at run time, and graft is
 * linked statically) on a JSON audit.  graft-html is looked for in
 * $GRAFT_HTML, next to the graft binary, then on the PATH. */
#include "html_report.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

bool html_render(const char *report_json, const char *html, Diag *d)
{
	struct stat a, b;
	if (stat(report_json, &a) == 0 && stat(html, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		diag_error(d, html, "refusing to write: it is the audit the page is made from");
		return false;
	}
	char prog[4096] = "graft-html";
	const char *env = getenv("GRAFT_HTML");
	ssize_t n = readlink("/proc/self/exe", prog, sizeof prog - 16);
	if (env && *env) {
		snprintf(prog, sizeof prog, "%s", env);
	} else if (n > 0) {
		prog[n] = 0;
		char *slash = strrchr(prog, '/');
		snprintf(slash ? slash + 1 : prog, 16, "graft-html");
		if (access(prog, X_OK) != 0)
			snprintf(prog, sizeof prog, "graft-html");
	} else {
		snprintf(prog, sizeof prog, "graft-html");
	}
	char *argv[] = {prog, (char *)report_json, (char *)html, NULL};
	pid_t pid;
	int err = posix_spawnp(&pid, prog, NULL, NULL, argv, environ);
	if (err) {
		diag_error(d, html, "cannot run %s for the HTML report: %s", prog, strerror(err));
		return false;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			diag_error(d, html, "waiting for %s: %s", prog, strerror(errno));
			return false;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		diag_error(d, html, "%s failed: the HTML report was not written", prog);
		return false;
	}
	return true;
}

bool html_write_report(const char *html, const char *report, const char *input, const char *output,
                       const AuditHist *before, const AuditHist *after, const RwRuleSet *const *sets, int nsets,
                       const RwResult *r, Diag *d)
{
	if (report)  /* written already, next to this call */
		return html_render(report, html, d);
	char tmp[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/graft-audit-XXXXXX.json", dir && *dir ? dir : "/tmp");
	int fd = mkstemps(tmp, 5);
	if (fd < 0) {
		diag_error(d, tmp, "cannot create a temporary audit: %s", strerror(errno));
		return false;
	}
	close(fd);
	bool ok = audit_write_report(tmp, input, output, before, after, sets, nsets, r, d) && html_render(tmp, html, d);
	unlink(tmp);
	return ok;
}
