/* Snort rule parser and keyword set on crafted lines, then on the real
 * community rule set (path in argv[1]). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "keyword_set.h"

#define HDR "alert tcp $EXTERNAL_NET any -> $HOME_NET 80 "

static enum ac_line_kind
parse(const char *line, struct ac_rule *r, char *err)
{
	err[0] = '\0';
	return ac_rule_parse_line(line, strlen(line), r, err, 256);
}

static void
expect_bytes(const struct ac_content *c, const char *want, size_t wlen, const char *what)
{
	CHECK(c->len == wlen && memcmp(c->bytes, want, wlen) == 0, "%s: decoded %u bytes, want %zu",
		what, c->len, wlen);
}

static void
test_good_lines(void)
{
	struct ac_rule r;
	char err[256];

	CHECK(parse(HDR
		      "(msg:\"a; b\"; content:\"abc\"; classtype:attempted-dos; sid:105; rev:14;)",
		      &r, err) == AC_LINE_RULE,
		"plain rule: %s", err);
	CHECK(r.n_contents == 1 && r.sid == 105 && r.rev == 14 && !r.disabled,
		"plain rule fields: n=%u sid=%u rev=%u", r.n_contents, r.sid, r.rev);
	CHECK(strcmp(r.classtype, "attempted-dos") == 0, "classtype '%s'", r.classtype);
	if (r.n_contents == 1) {
		expect_bytes(&r.contents[0], "abc", 3, "plain");
		CHECK(!r.contents[0].nocase && !r.contents[0].negated, "plain flags");
		CHECK(r.contents[0].depth == AC_NO_VALUE, "no depth");
	}
	ac_rule_free(&r);

	CHECK(parse(HDR "(content:\"GET|20 0D 0a|x|00|\"; content:\"|41|\"; sid:1;)", &r, err) ==
			AC_LINE_RULE,
		"hex rule: %s", err);
	if (r.n_contents == 2) {
		expect_bytes(&r.contents[0], "GET \r\nx\0", 8, "text+hex");
		expect_bytes(&r.contents[1], "A", 1, "hex only");
	} else {
		CHECK(0, "hex rule has %u contents, want 2", r.n_contents);
	}
	ac_rule_free(&r);

	CHECK(parse(HDR "(content:\"a\\\"b\\;c\\\\d\"; sid:2;)", &r, err) == AC_LINE_RULE,
		"escapes: %s", err);
	if (r.n_contents == 1)
		expect_bytes(&r.contents[0], "a\"b;c\\d", 7, "escapes");
	ac_rule_free(&r);

	CHECK(parse(HDR "(content:\"USER\"; nocase; depth:4; content:\"w0rm\"; "
			"distance:1; within:10; offset:-3; sid:3;)",
		      &r, err) == AC_LINE_RULE,
		"modifiers: %s", err);
	if (r.n_contents == 2) {
		CHECK(r.contents[0].nocase && !r.contents[1].nocase,
			"nocase applies to the content before it only");
		CHECK(r.contents[0].depth == 4 && r.contents[0].distance == AC_NO_VALUE,
			"depth recorded on the first content");
		CHECK(r.contents[1].distance == 1 && r.contents[1].within == 10 &&
				r.contents[1].offset == -3,
			"distance/within/offset on the second: %d %d %d", r.contents[1].distance,
			r.contents[1].within, r.contents[1].offset);
	} else {
		CHECK(0, "modifier rule has %u contents", r.n_contents);
	}
	ac_rule_free(&r);

	CHECK(parse(HDR "(content:!\"000\"; content: ! \"x|7C|y\"; sid:4;)", &r, err) ==
			AC_LINE_RULE,
		"negation: %s", err);
	if (r.n_contents == 2) {
		CHECK(r.contents[0].negated && r.contents[1].negated, "both negated");
		expect_bytes(&r.contents[1], "x|y", 3, "negated with hex pipe");
	}
	ac_rule_free(&r);

	CHECK(parse("# " HDR "(content:\"zz\"; sid:5;)", &r, err) == AC_LINE_RULE,
		"disabled rule: %s", err);
	CHECK(r.disabled, "commented-out rule marked disabled");
	ac_rule_free(&r);

	CHECK(parse("# alert on this: see the manual", &r, err) == AC_LINE_IGNORED,
		"prose comment ignored");
	CHECK(parse("   \t ", &r, err) == AC_LINE_IGNORED, "blank line ignored");
	CHECK(parse("#-----------------", &r, err) == AC_LINE_IGNORED, "rule comment");
}

static void
expect_error(const char *line, const char *reason)
{
	struct ac_rule r;
	char err[256];
	enum ac_line_kind k = parse(line, &r, err);

	CHECK(k == AC_LINE_ERROR, "'%s' accepted (kind %d), want error '%s'", line, k, reason);
	CHECK(k != AC_LINE_ERROR || strstr(err, reason) != NULL,
		"'%s': error '%s' does not say '%s'", line, err, reason);
	if (k == AC_LINE_RULE)
		ac_rule_free(&r);
}

static void
test_bad_lines(void)
{
	expect_error(HDR "(content:\"|0|\"; sid:1;)", "odd number of hex digits");
	expect_error(HDR "(content:\"|4 1|\"; sid:1;)", "hex byte split");
	expect_error(HDR "(content:\"|zz|\"; sid:1;)", "bad hex character 0x7a");
	expect_error(HDR "(content:\"ab|41\"; sid:1;)", "unterminated |hex|");
	expect_error(HDR "(content:\"abc; sid:1;)", "unterminated quote");
	expect_error(HDR "(content:abc; sid:1;)", "not in double quotes");
	expect_error(HDR "(content:\"\"; sid:1;)", "empty content");
	expect_error(HDR "(content:\"a\" x; sid:1;)", "text after the closing quote");
	expect_error(HDR "(nocase; content:\"a\"; sid:1;)", "'nocase' before any content");
	expect_error(HDR "(depth:3; content:\"a\"; sid:1;)", "'depth' before any content");
	expect_error(HDR "(content:\"a\"; sid:1;", "does not end with ')'");
	expect_error(HDR "content:\"a\"; sid:1;)", "no '('");
	expect_error("alrt tcp any any -> any any (content:\"a\";)", "unknown rule action 'alrt'");
	expect_error("alert tcpx any any -> any any (content:\"a\";)", "unknown protocol 'tcpx'");
	expect_error("alert tcp any any any any (content:\"a\";)", "6 fields");
	expect_error("alert tcp any any => any any (content:\"a\";)", "bad direction '=>'");
	expect_error(HDR "(content:\"a\"; sid:12x;)", "bad sid '12x'");
	expect_error("# " HDR "(content:\"|0|\";)", "odd number of hex digits");
}

static int
write_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok ? 0 : -1;
}

static const struct ac_skip *
find_skip(const struct ac_ruleset *rs, unsigned line, const char *reason)
{
	for (uint32_t i = 0; i < rs->n_skipped; i++)
		if (rs->skipped[i].line == line && strstr(rs->skipped[i].reason, reason))
			return &rs->skipped[i];
	return NULL;
}

static void
test_ruleset(void)
{
	char path[] = "/tmp/ac_test_rulesXXXXXX";
	const char *text = "# comment line\n"                                               /* 1 */
		HDR "(content:\"abc\"; classtype:attempted-dos; sid:1;)\n"                  /* 2 */
		HDR "(content:\"abc\"; content:\"abc\"; classtype:misc-activity; sid:2;)\n" /* 3 */
		HDR "(content:\"ABC\"; nocase; classtype:attempted-dos; sid:3;)\n"          /* 4 */
		HDR "(msg:\"no content\"; classtype:attempted-dos; sid:4;)\n"               /* 5 */
		HDR "(content:!\"neg\"; classtype:attempted-dos; sid:5;)\n"                 /* 6 */
		HDR "(content:\"|zz|\"; sid:6;)\n"                                          /* 7 */
		HDR "(content:\"xy\"; content:!\"q\"; \\\n"                                 /* 8 */
			   "   classtype:denial-of-service; sid:7;)\n"                      /* 9 */
			   "# " HDR "(content:\"off\"; classtype:attempted-dos; sid:8;)\n"; /* 10 */
	struct ac_ruleset rs;
	char err[256];

	if (write_file(path, text) < 0) {
		CHECK(0, "cannot write %s", path);
		return;
	}
	CHECK(ac_ruleset_load(path, NULL, &rs, err, sizeof(err)) == 0, "load: %s", err);
	CHECK(rs.rules_seen == 8, "rules_seen %u, want 8", rs.rules_seen);
	CHECK(rs.n_rules == 5, "usable rules %u, want 5 (sids 1,2,3,7,8)", rs.n_rules);
	CHECK(rs.rules_unusable == 3, "unusable %u, want 3", rs.rules_unusable);
	CHECK(rs.n_keywords == 4, "keywords %u, want 4 (abc, ABC/nocase, xy, off)", rs.n_keywords);
	CHECK(rs.contents_negated == 1, "negated contents in used rules: %u", rs.contents_negated);
	CHECK(rs.n_keywords > 0 && rs.keywords[0].n_rules == 2,
		"'abc' maps to rules 1 and 2 (rule 2 names it twice, listed once)");
	CHECK(find_skip(&rs, 5, "no content"), "line 5 listed: no content");
	CHECK(find_skip(&rs, 6, "only negated"), "line 6 listed: only negated");
	CHECK(find_skip(&rs, 7, "bad hex"), "line 7 listed: malformed");
	CHECK(find_skip(&rs, 8, "negated content !\"q\""), "line 8 negated content listed");
	ac_ruleset_free(&rs);

	struct ac_filter dos = { ac_dos_classtypes, ac_n_dos_classtypes, false, false };
	CHECK(ac_ruleset_load(path, &dos, &rs, err, sizeof(err)) == 0, "load dos: %s", err);
	CHECK(rs.n_rules == 4, "DoS rules %u, want 4 (sids 1,3,7,8)", rs.n_rules);
	/* sid 2 is misc-activity; the malformed line has no known class and
	 * stays listed as unusable whatever the filter. */
	CHECK(rs.rules_filtered == 1 && rs.rules_unusable == 3,
		"filtered %u (want 1), unusable %u (want 3)", rs.rules_filtered, rs.rules_unusable);
	ac_ruleset_free(&rs);

	dos.enabled_only = true;
	CHECK(ac_ruleset_load(path, &dos, &rs, err, sizeof(err)) == 0, "load enabled: %s", err);
	CHECK(rs.n_rules == 3, "enabled DoS rules %u, want 3", rs.n_rules);
	ac_ruleset_free(&rs);

	const char *none[] = { "no-such-class" };
	struct ac_filter nf = { none, 1, false, false };
	CHECK(ac_ruleset_load(path, &nf, &rs, err, sizeof(err)) < 0 &&
			strstr(err, "no usable content keyword"),
		"empty selection is an error: '%s'", err);
	CHECK(ac_ruleset_load("/nonexistent/x.rules", NULL, &rs, err, sizeof(err)) < 0 &&
			strstr(err, "/nonexistent/x.rules"),
		"missing file named in the error: '%s'", err);
	unlink(path);
}

/* The shipped community set: every rule line is seen and accounted for. */
static void
test_community(const char *path)
{
	struct ac_ruleset rs;
	char err[256];

	CHECK(ac_ruleset_load(path, NULL, &rs, err, sizeof(err)) == 0, "load %s: %s", path, err);
	CHECK(rs.n_rules + rs.rules_unusable + rs.rules_filtered == rs.rules_seen,
		"accounting: %u used + %u unusable + %u filtered != %u seen", rs.n_rules,
		rs.rules_unusable, rs.rules_filtered, rs.rules_seen);
	/* shared/data/README.md: 3,886 rules with content keywords; those
	 * with only negated contents are listed, all others used. */
	uint32_t only_negated = 0, no_content = 0;
	for (uint32_t i = 0; i < rs.n_skipped; i++) {
		only_negated += strstr(rs.skipped[i].reason, "only negated") != NULL;
		no_content += strstr(rs.skipped[i].reason, "no content") != NULL;
	}
	CHECK(rs.n_rules + only_negated == 3886, "used %u + only-negated %u != 3886", rs.n_rules,
		only_negated);
	CHECK(only_negated + no_content == rs.rules_unusable,
		"unusable %u are not all no-content/only-negated (%u+%u): a rule was "
		"refused as malformed",
		rs.rules_unusable, no_content, only_negated);
	printf("community: %u rules seen, %u used, %u unusable, %u keywords\n", rs.rules_seen,
		rs.n_rules, rs.rules_unusable, rs.n_keywords);
	ac_ruleset_free(&rs);

	struct ac_filter dos = { ac_dos_classtypes, ac_n_dos_classtypes, false, false };
	CHECK(ac_ruleset_load(path, &dos, &rs, err, sizeof(err)) == 0, "load dos: %s", err);
	/* shared/data/README.md: 72 rules in the DoS set; the 11 without any
	 * content (icmp_id, flags, dsize, ... only) are listed. */
	CHECK(rs.rules_seen - rs.rules_filtered == 72, "DoS rules selected %u, want 72",
		rs.rules_seen - rs.rules_filtered);
	CHECK(rs.n_rules + rs.rules_unusable == 72 && rs.n_rules > 0,
		"DoS: %u used + %u unusable != 72", rs.n_rules, rs.rules_unusable);
	printf("community DoS: %u used, %u keywords\n", rs.n_rules, rs.n_keywords);
	ac_ruleset_free(&rs);
}

int
main(int argc, char **argv)
{
	test_good_lines();
	test_bad_lines();
	test_ruleset();
	if (argc > 1)
		test_community(argv[1]);
	else
		CHECK(0, "usage: %s COMMUNITY_RULES", argv[0]);
	return check_done("test_rules");
}
