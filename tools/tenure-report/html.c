/*
 * --html FILE: one self-contained, offline HTML report.
 *
 * The page is: web/report.css, chart.js (the npm package's dist/chart.umd.min.js, installed
 * into the build tree by CMake with `npm ci` from web/package-lock.json and embedded into the
 * tool as web_assets.c), the data as JSON in <script type="application/json" id="tenure-data">
 * (the --json report of every trace, as {"tool": ..., "traces": [...]}), and web/report.js,
 * which draws the charts and the tables from that JSON. Nothing is loaded from elsewhere.
 *
 * Built without the bundle (npm missing at configure time), html_available() is 0.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#ifdef TENURE_REPORT_HTML
extern const unsigned char tr_web_chartjs[], tr_web_app[], tr_web_css[];
extern const size_t tr_web_chartjs_len, tr_web_app_len, tr_web_css_len;

int html_available(void) { return 1; }

/* Write text into a <script> or <style> element: every "</" becomes "<\/" (the same string
 * inside JS strings and regular expressions, never a closing tag) and a trailing
 * sourceMappingURL comment is left out (the map is not in the page). */
static void put_raw(FILE *out, const unsigned char *s, size_t n) {
    static const char smap[] = "//# sourceMappingURL=";
    size_t end = n;
    for (size_t i = n; i-- > 0;) {
        if (n - i >= sizeof smap - 1 && memcmp(s + i, smap, sizeof smap - 1) == 0) {
            end = i;
            break;
        }
        if (n - i > 4096)
            break; /* only at the very end */
    }
    size_t from = 0;
    for (size_t i = 0; i + 1 < end; i++) {
        if (s[i] == '<' && s[i + 1] == '/') {
            fwrite(s + from, 1, i + 1 - from, out);
            fputc('\\', out);
            from = i + 1;
        }
    }
    fwrite(s + from, 1, end - from, out);
}

void html_begin(FILE *out) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"tenure-report\">\n"
          "<title>tenure GC report</title>\n"
          /* first: collect errors of every later script (the page shows them, tests read them) */
          "<script>window.tenureErrors=[];window.addEventListener('error',function(e){"
          "window.tenureErrors.push(String(e.message||e));});</script>\n<style>\n",
          out);
    put_raw(out, tr_web_css, tr_web_css_len);
    fputs("\n</style>\n</head>\n<body>\n<header><h1>tenure GC report</h1>"
          "<p id=\"status\" data-state=\"loading\">Loading&hellip; (this page needs JavaScript)</p></header>\n"
          "<main id=\"app\"></main>\n<script>\n",
          out);
    put_raw(out, tr_web_chartjs, tr_web_chartjs_len);
    fputs("\n</script>\n<script type=\"application/json\" id=\"tenure-data\">{\"tool\": \"tenure-report\", "
          "\"traces\": [",
          out);
}

void html_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return;
    print_json_trace(mem, path, m, res, first);
    if (fclose(mem) != 0) {
        free(buf);
        return;
    }
    /* inside the <script> element no "<" at all: as \u003c it is the same JSON string */
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '<')
            fputs("\\u003c", out);
        else
            fputc(buf[i], out);
    }
    free(buf);
}

void html_end(FILE *out) {
    fputs("\n]}</script>\n<script>\n", out);
    put_raw(out, tr_web_app, tr_web_app_len);
    fputs("\n</script>\n</body>\n</html>\n", out);
}

#else

int html_available(void) { return 0; }
void html_begin(FILE *out) { (void)out; }
void html_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first) {
    (void)out, (void)path, (void)m, (void)res, (void)first;
}
void html_end(FILE *out) { (void)out; }

#endif
