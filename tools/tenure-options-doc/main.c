/* tenure-options-doc - writes the README's options table from the options X-macro
 * (TENURE_OPTIONS in include/tenure.h: name, C type, default, description), so the table
 * cannot miss an option or disagree with the library's defaults. Its output is what lies
 * between <!-- options:begin --> and <!-- options:end --> in README.md; the test
 * options_doc_current compares the two (tests/docs/compare_doc_block.cmake, which rewrites the
 * block with -DUPDATE=ON). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <tenure.h>

/* A default as the README writes it: sizes that are whole MiB or GiB in those units (4 MiB,
 * 32 GiB), everything else as a decimal number. */
static void print_default(const char *type, uint64_t u, int64_t i) {
    if (strncmp(type, "int", 3) == 0)
        printf("%" PRId64, i);
    else if (u && u % ((uint64_t)1 << 30) == 0)
        printf("%" PRIu64 " GiB", u >> 30);
    else if (u && u % ((uint64_t)1 << 20) == 0)
        printf("%" PRIu64 " MiB", u >> 20);
    else
        printf("%" PRIu64, u);
}

/* The description in a table cell: a '|' would end the cell. */
static void print_cell(const char *text) {
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            putchar('\\');
        putchar(*p);
    }
}

static void print_row(const char *name, const char *type, uint64_t u, int64_t i, const char *desc) {
    printf("| `%s` | ", name);
    print_default(type, u, i);
    printf(" | ");
    print_cell(desc);
    printf(" | `TENURE_%s` |\n", name);
}

int main(void) {
    tenure_config c;
    tenure_config_init(&c); /* the defaults as the library fills them */
    printf("| option | default | meaning | environment variable |\n|---|---|---|---|\n");
#define TN_OPTION_ROW(name, ctype, def, desc) print_row(#name, #ctype, (uint64_t)c.name, (int64_t)c.name, desc);
    TENURE_OPTIONS(TN_OPTION_ROW)
#undef TN_OPTION_ROW
    return 0;
}
