/*
 * Unit tests of the XYZ / extended XYZ reader and writer (tools/xyz.c),
 * without the library. Argument: the folder with the reference .extxyz files
 * (tests/data/reference).
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xyz.h"
#include "xyz_internal.h"

static int failures = 0;
static const char *data_dir = ".";

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                               \
        }                                                                             \
    } while (0)

#define CHECK_STR(got, want)                                                              \
    do {                                                                                  \
        const char *got_ = (got), *want_ = (want);                                        \
        if (!got_ || strcmp(got_, want_) != 0) {                                          \
            fprintf(stderr, "%s:%d: got\n  [%s]\nwant\n  [%s]\n", __FILE__, __LINE__,     \
                    got_ ? got_ : "(null)", want_);                                       \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static int parse(const char *text, xyz_file *file, char *err)
{
    return xyz_read_memory("t.xyz", text, strlen(text), file, err, XYZ_ERROR_SIZE);
}

/* Parse text that must be fine. */
static int parse_ok(const char *text, xyz_file *file, int line)
{
    char err[XYZ_ERROR_SIZE];
    int status = parse(text, file, err);
    if (status != XYZ_OK) {
        fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, line, err);
        failures++;
        return 0;
    }
    return 1;
}
#define PARSE_OK(text, file) parse_ok((text), (file), __LINE__)

/* Parse text that must fail with exactly this message. */
static void expect_error(const char *text, const char *message, int line)
{
    char err[XYZ_ERROR_SIZE];
    xyz_file file;
    int status = parse(text, &file, err);
    if (status != XYZ_ERROR_FORMAT) {
        fprintf(stderr, "%s:%d: expected a format error, got status %d\n", __FILE__, line,
                status);
        failures++;
    } else if (strcmp(err, message) != 0) {
        fprintf(stderr, "%s:%d: error message\n  got  [%s]\n  want [%s]\n", __FILE__, line, err,
                message);
        failures++;
    }
    CHECK(file.n_frames == 0 && file.frames == NULL && file.name == NULL);
    xyz_file_free(&file);
}
#define EXPECT_ERROR(text, message) expect_error((text), (message), __LINE__)

static const xyz_info *find_info(const xyz_frame *f, const char *key)
{
    for (size_t i = 0; i < f->n_info; i++)
        if (strcmp(f->info[i].key, key) == 0)
            return &f->info[i];
    return NULL;
}

static char *data_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    return path;
}

/* Write every frame (no energy, no forces), read it back, compare. */
static void check_round_trip(const xyz_file *a, int line)
{
    xyz_buffer out = {0};
    for (size_t i = 0; i < a->n_frames; i++)
        CHECK(xyz_write_frame(&out, &a->frames[i], NULL, NULL, NULL) == 0);
    xyz_file b;
    char err[XYZ_ERROR_SIZE];
    if (xyz_read_memory("round-trip", out.data, out.size, &b, err, sizeof err) != XYZ_OK) {
        fprintf(stderr, "%s:%d: round trip does not read back: %s\n%s", __FILE__, line, err,
                out.data);
        failures++;
        xyz_buffer_free(&out);
        return;
    }
    int same = b.n_frames == a->n_frames;
    for (size_t i = 0; same && i < a->n_frames; i++) {
        const xyz_frame *f = &a->frames[i], *g = &b.frames[i];
        same = f->n_atoms == g->n_atoms && f->has_cell == g->has_cell &&
               memcmp(f->cell, g->cell, sizeof f->cell) == 0 &&
               memcmp(f->pbc, g->pbc, 3) == 0 && g->has_pbc &&
               memcmp(f->numbers, g->numbers, (size_t)f->n_atoms * sizeof *f->numbers) == 0 &&
               memcmp(f->positions, g->positions, 3 * (size_t)f->n_atoms * sizeof(double)) == 0;
        /* info: the same pairs, results dropped, same order, same text */
        size_t k = 0;
        for (size_t j = 0; same && j < f->n_info; j++) {
            if (xyz_key_is_result(f->info[j].key))
                continue;
            same = k < g->n_info && strcmp(f->info[j].key, g->info[k].key) == 0 &&
                   ((!f->info[j].value && !g->info[k].value) ||
                    (f->info[j].value && g->info[k].value &&
                     strcmp(f->info[j].value, g->info[k].value) == 0));
            k++;
        }
        same = same && k == g->n_info;
    }
    if (!same) {
        fprintf(stderr, "%s:%d: round trip differs:\n%s", __FILE__, line, out.data);
        failures++;
    }
    /* Writing again gives the same bytes. */
    xyz_buffer again = {0};
    for (size_t i = 0; i < b.n_frames; i++)
        CHECK(xyz_write_frame(&again, &b.frames[i], NULL, NULL, NULL) == 0);
    if (again.size != out.size || memcmp(again.data, out.data, out.size) != 0) {
        fprintf(stderr, "%s:%d: second write differs:\n%s---\n%s", __FILE__, line, out.data,
                again.data);
        failures++;
    }
    xyz_buffer_free(&again);
    xyz_file_free(&b);
    xyz_buffer_free(&out);
}
#define CHECK_ROUND_TRIP(file) check_round_trip((file), __LINE__)

static void test_elements(void)
{
    CHECK_STR(xyz_element_symbol(1), "H");
    CHECK_STR(xyz_element_symbol(17), "Cl");
    CHECK_STR(xyz_element_symbol(118), "Og");
    CHECK(xyz_element_symbol(0) == NULL);
    CHECK(xyz_element_symbol(119) == NULL);
    for (int z = 1; z <= XYZ_MAX_ATOMIC_NUMBER; z++) {
        const char *s = xyz_element_symbol(z);
        CHECK(s && xyz_element_number(s, strlen(s)) == z);
    }
    CHECK(xyz_element_number("cl", 2) == 17);
    CHECK(xyz_element_number("CL", 2) == 17);
    CHECK(xyz_element_number("Xx", 2) == 0);
    CHECK(xyz_element_number("X", 1) == 0);
    CHECK(xyz_element_number("", 0) == 0);
    CHECK(xyz_element_number("Cla", 3) == 0);
    CHECK(xyz_key_is_result("energy"));
    CHECK(xyz_key_is_result("energy_hartree"));
    CHECK(xyz_key_is_result("free_energy"));
    CHECK(xyz_key_is_result("stress"));
    CHECK(xyz_key_is_result("virial"));
    CHECK(xyz_key_is_result("forces"));
    CHECK(xyz_key_is_result("Energy"));
    CHECK(!xyz_key_is_result("name"));
    CHECK(!xyz_key_is_result("dipole"));
    CHECK(!xyz_key_is_result("energ"));
}

static void test_reference_files(void)
{
    char err[XYZ_ERROR_SIZE];
    xyz_file f;
    int status = xyz_read_file(data_path("g2_CH4.extxyz"), &f, err, sizeof err);
    CHECK(status == XYZ_OK);
    if (status != XYZ_OK) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(f.n_frames == 1);
    const xyz_frame *fr = &f.frames[0];
    CHECK(fr->n_atoms == 5);
    CHECK(fr->numbers[0] == 6 && fr->numbers[1] == 1 && fr->numbers[4] == 1);
    CHECK(fr->positions[0] == 0.0 && fr->positions[3] == 0.629118 &&
          fr->positions[6] == -0.629118 && fr->positions[14] == -0.629118);
    CHECK(!fr->has_cell && fr->has_pbc && fr->pbc[0] == 0 && fr->pbc[1] == 0 && fr->pbc[2] == 0);
    CHECK(fr->count_line == 1 && fr->comment_line == 2 && xyz_atom_line(fr, 0) == 3 &&
          xyz_atom_line(fr, 4) == 7);
    CHECK(fr->n_info == 5);
    const xyz_info *model = find_info(fr, "model");
    CHECK(model && strcmp(model->value,
                          "ANI-2x, 8-model ensemble average (TorchANI BuiltinEnsemble)") == 0);
    CHECK(model && strcmp(model->text,
                          "model=\"ANI-2x, 8-model ensemble average (TorchANI BuiltinEnsemble)\"") ==
                       0);
    const xyz_info *name = find_info(fr, "name");
    CHECK(name && strcmp(name->text, "name=g2_CH4") == 0);
    CHECK(find_info(fr, "energy_hartree") != NULL);
    CHECK_ROUND_TRIP(&f);

    /* The writer: Lattice absent, kept keys in order, results dropped. */
    xyz_buffer out = {0};
    double energy = -1102.3456;
    CHECK(xyz_write_frame(&out, fr, &energy, NULL, NULL) == 0);
    static const char want_line2[] =
        "Properties=species:S:1:pos:R:3 name=g2_CH4 model=\"ANI-2x, 8-model "
        "ensemble average (TorchANI BuiltinEnsemble)\" dtype=float64 "
        "units=\"positions/cell angstrom, energy hartree, forces "
        "hartree/angstrom\" energy=-1102.3456000000001 pbc=\"F F F\"\n"
        "C    0.0000000000000000e+00";
    const char *line2 = out.data ? strchr(out.data, '\n') : NULL;
    CHECK(line2 && strncmp(line2 + 1, want_line2, sizeof want_line2 - 1) == 0);
    xyz_buffer_free(&out);
    xyz_file_free(&f);

    status = xyz_read_file(data_path("g2_CH3Cl.extxyz"), &f, err, sizeof err);
    CHECK(status == XYZ_OK);
    if (status == XYZ_OK) {
        CHECK(f.n_frames == 1 && f.frames[0].n_atoms == 5 && f.frames[0].numbers[1] == 17);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    } else {
        fprintf(stderr, "  %s\n", err);
    }

    status = xyz_read_file(data_path("water_box_64_triclinic.extxyz"), &f, err, sizeof err);
    CHECK(status == XYZ_OK);
    if (status == XYZ_OK) {
        fr = &f.frames[0];
        CHECK(f.n_frames == 1 && fr->n_atoms == 192 && fr->numbers[0] == 8 &&
              fr->numbers[1] == 1);
        static const double cell[9] = {12.4172, 0.0, 0.0, 3.1043, 12.4172, 0.0,
                                       -1.8626, 2.4834, 12.4172};
        CHECK(fr->has_cell && memcmp(fr->cell, cell, sizeof cell) == 0);
        CHECK(fr->pbc[0] && fr->pbc[1] && fr->pbc[2]);
        CHECK(fr->positions[0] == 13.21775692);
        CHECK_ROUND_TRIP(&f);
        out = (xyz_buffer){0};
        CHECK(xyz_write_frame(&out, fr, NULL, NULL, NULL) == 0);
        CHECK(out.data && strncmp(out.data,
                                  "192\nLattice=\"12.4172 0 0 3.1043 12.4172 0 -1.8626 2.4834 "
                                  "12.4172\" Properties=species:S:1:pos:R:3 name=",
                                  99) == 0);
        xyz_buffer_free(&out);
        xyz_file_free(&f);
    } else {
        fprintf(stderr, "  %s\n", err);
    }
}

static void test_multi_frame(void)
{
    xyz_file f;
    const char *text = "2\n"
                       "first\n"
                       "O 0 0 0\n"
                       "H 0 0 0.96\n"
                       "\n"
                       "3\n"
                       "Properties=species:S:1:pos:R:3 name=second\n"
                       "C 1 2 3\n"
                       "N 4 5 6\n"
                       "S 7 8 9\n"
                       "\n"
                       "   \n";
    if (!PARSE_OK(text, &f))
        return;
    CHECK(f.n_frames == 2);
    CHECK_STR(f.name, "t.xyz");
    CHECK(f.frames[0].n_atoms == 2 && f.frames[1].n_atoms == 3);
    CHECK(f.frames[0].count_line == 1 && f.frames[1].count_line == 6);
    CHECK(f.frames[1].comment_line == 7 && xyz_atom_line(&f.frames[1], 2) == 10);
    CHECK(f.frames[1].numbers[0] == 6 && f.frames[1].numbers[1] == 7 &&
          f.frames[1].numbers[2] == 16);
    CHECK(f.frames[1].positions[8] == 9.0);
    CHECK(f.frames[0].n_info == 1 && strcmp(f.frames[0].info[0].key, "first") == 0 &&
          f.frames[0].info[0].value == NULL);
    CHECK_ROUND_TRIP(&f);
    xyz_file_free(&f);

    /* no newline at the end; CRLF line ends */
    if (PARSE_OK("1\r\nname=x\r\nH 1.5 2.5 3.5\r\n1\r\n\r\nHe 0 0 0", &f)) {
        CHECK(f.n_frames == 2 && f.frames[0].positions[2] == 3.5 && f.frames[1].numbers[0] == 2);
        CHECK(f.frames[0].n_info == 1 && strcmp(f.frames[0].info[0].text, "name=x") == 0);
        CHECK(f.frames[1].n_info == 0);
        xyz_file_free(&f);
    }
}

static void test_plain_xyz(void)
{
    xyz_file f;
    const char *text = "3\n"
                       "water molecule, from somewhere\n"
                       "O   0.0 0.0 0.0  extra 1 2\n"
                       "h\t0.9572 0 0\n"
                       "8 -0.24 0.927 0.0 more\n";
    if (!PARSE_OK(text, &f))
        return;
    const xyz_frame *fr = &f.frames[0];
    CHECK(fr->n_atoms == 3 && fr->numbers[0] == 8 && fr->numbers[1] == 1 && fr->numbers[2] == 8);
    CHECK(fr->positions[3] == 0.9572 && fr->positions[6] == -0.24 && fr->positions[7] == 0.927);
    CHECK(!fr->has_cell && !fr->has_pbc && !fr->pbc[0] && !fr->pbc[1] && !fr->pbc[2]);
    CHECK(fr->n_info == 4);
    CHECK_ROUND_TRIP(&f);
    xyz_file_free(&f);

    /* an apostrophe in a free comment: read as ASE does, written back quoted */
    if (PARSE_OK("1\nJohn's molecule\nH 0 0 0\n", &f)) {
        fr = &f.frames[0];
        CHECK(fr->n_info == 1 && strcmp(fr->info[0].key, "Johns molecule") == 0);
        CHECK_STR(fr->info[0].text, "\"Johns molecule\"");
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* a value whose quote is never closed: the rest of the line, quoted anew */
    if (PARSE_OK("1\nx=1 name=\"abc 'def' pbc=T\nH 0 0 0\n", &f)) {
        fr = &f.frames[0];
        CHECK(fr->n_info == 2 && !fr->has_pbc && !fr->pbc[0]);
        CHECK_STR(fr->info[0].text, "x=1");
        CHECK_STR(fr->info[1].value, "abc 'def' pbc=T");
        CHECK_STR(fr->info[1].text, "name=\"abc 'def' pbc=T\"");
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* an empty comment line */
    if (PARSE_OK("1\n\nH 0 0 0\n", &f)) {
        CHECK(f.frames[0].n_info == 0);
        xyz_file_free(&f);
    }
}

static void test_comment_line(void)
{
    xyz_file f;
    const char *text = "1\n"
                       "a=\"x y\" b='c d' c={1 2} d=[3,4] e=\"say \\\"hi\\\"\" f=plain g"
                       "  h = 7 energy=-3.5 stress=\"1 2 3 4 5 6 7 8 9\" forces_ok=1 uid=\"\"\n"
                       "H 0 0 0\n";
    if (!PARSE_OK(text, &f))
        return;
    const xyz_frame *fr = &f.frames[0];
    CHECK(fr->n_info == 12);
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "energy", "stress",
                                       "forces_ok", "uid"};
    static const char *const values[] = {"x y", "c d", "1 2", "3,4", "say \"hi\"", "plain",
                                         NULL, "7", "-3.5", "1 2 3 4 5 6 7 8 9", "1", ""};
    static const char *const texts[] = {"a=\"x y\"", "b='c d'", "c={1 2}", "d=[3,4]",
                                        "e=\"say \\\"hi\\\"\"", "f=plain", "g", "h=7",
                                        "energy=-3.5", "stress=\"1 2 3 4 5 6 7 8 9\"",
                                        "forces_ok=1", "uid=\"\""};
    for (size_t i = 0; i < 12 && i < fr->n_info; i++) {
        CHECK_STR(fr->info[i].key, keys[i]);
        if (values[i])
            CHECK_STR(fr->info[i].value, values[i]);
        else
            CHECK(fr->info[i].value == NULL);
        CHECK_STR(fr->info[i].text, texts[i]);
    }
    CHECK_ROUND_TRIP(&f);
    xyz_buffer out = {0};
    CHECK(xyz_write_frame(&out, fr, NULL, NULL, NULL) == 0);
    CHECK_STR(out.data, "1\nProperties=species:S:1:pos:R:3 a=\"x y\" b='c d' c={1 2} d=[3,4] "
                        "e=\"say \\\"hi\\\"\" f=plain g h=7 uid=\"\" pbc=\"F F F\"\n"
                        "H    0.0000000000000000e+00   0.0000000000000000e+00   "
                        "0.0000000000000000e+00\n");
    xyz_buffer_free(&out);
    xyz_file_free(&f);
}

static void test_cell_and_pbc(void)
{
    xyz_file f;
    /* Lattice without pbc: periodic in all three directions, as ASE */
    if (PARSE_OK("1\nLattice=\"10 0 0 0 11 0 0 0 12\"\nH 0 0 0\n", &f)) {
        const xyz_frame *fr = &f.frames[0];
        CHECK(fr->has_cell && !fr->has_pbc && fr->pbc[0] && fr->pbc[1] && fr->pbc[2]);
        CHECK(fr->cell[0] == 10 && fr->cell[4] == 11 && fr->cell[8] == 12 && fr->cell[1] == 0);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* commas, brackets, spaced '=' and other flag spellings */
    if (PARSE_OK("1\nLattice=[1.5,0,0, 0,2.5,0, 0,0,3.5] pbc = \"True false t\"\nH 0 0 0\n",
                 &f)) {
        const xyz_frame *fr = &f.frames[0];
        CHECK(fr->has_cell && fr->cell[0] == 1.5 && fr->cell[4] == 2.5 && fr->cell[8] == 3.5);
        CHECK(fr->has_pbc && fr->pbc[0] == 1 && fr->pbc[1] == 0 && fr->pbc[2] == 1);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* pbc without Lattice; one flag for all three */
    if (PARSE_OK("1\npbc=T\nH 0 0 0\n1\npbc=\"F T F\"\nH 0 0 0\n", &f)) {
        CHECK(!f.frames[0].has_cell && f.frames[0].pbc[0] && f.frames[0].pbc[1] &&
              f.frames[0].pbc[2]);
        CHECK(!f.frames[1].pbc[0] && f.frames[1].pbc[1] && !f.frames[1].pbc[2]);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* pbc="F F F" with a Lattice stays non-periodic */
    if (PARSE_OK("1\nLattice=\"5 0 0 0 5 0 0 0 5\" pbc=\"F F F\"\nH 0 0 0\n", &f)) {
        CHECK(f.frames[0].has_cell && !f.frames[0].pbc[0] && !f.frames[0].pbc[2]);
        xyz_file_free(&f);
    }
}

static void test_columns(void)
{
    xyz_file f;
    /* skipped columns before, between and after the ones we need */
    const char *text = "2\n"
                       "Properties=id:I:1:vel:R:3:species:S:1:flag:L:1:pos:R:3:tag:S:2 x=1\n"
                       "7 9 9 9 Cl T 1.0 2.0 3.0 a b\n"
                       "8 9 9 9 o F -1.0 -2.0 -3.0 c d extra\n";
    if (PARSE_OK(text, &f)) {
        const xyz_frame *fr = &f.frames[0];
        CHECK(fr->numbers[0] == 17 && fr->numbers[1] == 8);
        CHECK(fr->positions[0] == 1.0 && fr->positions[5] == -3.0);
        CHECK(fr->n_info == 1);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* atomic numbers: Z column, or numbers in the species column */
    if (PARSE_OK("2\nProperties=Z:I:1:pos:R:3\n6 0 0 0\n1 0 0 1.1\n", &f)) {
        CHECK(f.frames[0].numbers[0] == 6 && f.frames[0].numbers[1] == 1);
        xyz_file_free(&f);
    }
    if (PARSE_OK("2\nProperties=symbols:S:1:positions:R:3\n17 0 0 0\n118 0 0 2\n", &f)) {
        CHECK(f.frames[0].numbers[0] == 17 && f.frames[0].numbers[1] == 118);
        xyz_file_free(&f);
    }
    /* the writer's forces column reads back */
    if (PARSE_OK("2\nLattice=\"10 0 0 0 10 0 0 0 10\" name=x energy=5 pbc=\"T T F\"\n"
                 "O 0 -1.25 3\nCl 0.1 2 -0\n",
                 &f)) {
        xyz_buffer out = {0};
        const double energy = -1102.3456;
        const double forces[6] = {0.5, -0.25, 1e-3, 0, 0, 0};
        CHECK(xyz_write_frame(&out, &f.frames[0], &energy, forces, NULL) == 0);
        CHECK_STR(out.data,
                  "2\n"
                  "Lattice=\"10 0 0 0 10 0 0 0 10\" Properties=species:S:1:pos:R:3:forces:R:3 "
                  "name=x energy=-1102.3456000000001 pbc=\"T T F\"\n"
                  "O    0.0000000000000000e+00  -1.2500000000000000e+00   "
                  "3.0000000000000000e+00   5.0000000000e-01  -2.5000000000e-01   "
                  "1.0000000000e-03\n"
                  "Cl   1.0000000000000001e-01   2.0000000000000000e+00  "
                  "-0.0000000000000000e+00   0.0000000000e+00   0.0000000000e+00   "
                  "0.0000000000e+00\n");
        xyz_file g;
        char err[XYZ_ERROR_SIZE];
        CHECK(xyz_read_memory("w", out.data, out.size, &g, err, sizeof err) == XYZ_OK);
        if (g.n_frames == 1) {
            CHECK(memcmp(g.frames[0].positions, f.frames[0].positions, 6 * sizeof(double)) == 0);
            CHECK(g.frames[0].n_info == 2 && strcmp(g.frames[0].info[1].text,
                                                    "energy=-1102.3456000000001") == 0);
        }
        xyz_file_free(&g);
        xyz_buffer_free(&out);
        xyz_file_free(&f);
    }
}

/* Exact coordinates survive the round trip, whatever their size. */
static void test_exact_positions(void)
{
    xyz_file f;
    const char *text = "4\n\n"
                       "H 0.1 0.2 0.30000000000000004\n"
                       "H 1e-300 -1.7976931348623157e308 4.9406564584124654e-324\n"
                       "H 123456789.123456789 -0.0 2.2250738585072014e-308\n"
                       "H 0x1p-3 1E5 +7\n";
    if (PARSE_OK(text, &f)) {
        CHECK(f.frames[0].positions[2] == 0.30000000000000004);
        CHECK(f.frames[0].positions[9] == 0.125 && f.frames[0].positions[11] == 7.0);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }
    /* the process locale does not matter */
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "C.UTF-8"};
    for (size_t i = 0; i < sizeof locales / sizeof *locales; i++) {
        if (!setlocale(LC_ALL, locales[i]))
            continue;
        if (PARSE_OK("1\nLattice=\"1.5 0 0 0 1.5 0 0 0 1.5\"\nH 0.25 0.5 0.75\n", &f)) {
            CHECK(f.frames[0].positions[0] == 0.25 && f.frames[0].cell[0] == 1.5);
            xyz_buffer out = {0};
            CHECK(xyz_write_frame(&out, &f.frames[0], NULL, NULL, NULL) == 0);
            CHECK(out.data && strstr(out.data, "2.5000000000000000e-01") &&
                  strstr(out.data, "Lattice=\"1.5 0 0"));
            xyz_buffer_free(&out);
            xyz_file_free(&f);
        }
    }
    setlocale(LC_ALL, "C");
}

static void test_errors(void)
{
    /* file level */
    char err[XYZ_ERROR_SIZE];
    xyz_file f;
    CHECK(xyz_read_file("/nonexistent/missing.xyz", &f, err, sizeof err) == XYZ_ERROR_IO);
    CHECK_STR(err, "/nonexistent/missing.xyz: cannot open: No such file or directory");
    xyz_file_free(&f);
    CHECK(xyz_read_file("/", &f, err, sizeof err) == XYZ_ERROR_IO);
    CHECK_STR(err, "/: cannot read: Is a directory");
    xyz_file_free(&f);
    EXPECT_ERROR("", "t.xyz: file is empty");
    EXPECT_ERROR("\n  \n\n", "t.xyz: file is empty (only blank lines)");
    CHECK(xyz_read_memory("nul.xyz", "1\nx\nH 0\0 0 0\n", 14, &f, err, sizeof err) ==
          XYZ_ERROR_FORMAT);
    CHECK_STR(err, "nul.xyz: not a text file (a NUL byte on line 3)");

    /* the atom count */
    EXPECT_ERROR("abc\n\nH 0 0 0\n", "t.xyz:1: frame 1: expected the number of atoms, found \"abc\"");
    EXPECT_ERROR("2.5\n\nH 0 0 0\n",
                 "t.xyz:1: frame 1: expected the number of atoms, found \"2.5\"");
    EXPECT_ERROR("-1\n\nH 0 0 0\n", "t.xyz:1: frame 1: expected the number of atoms, found \"-1\"");
    EXPECT_ERROR("3 atoms\n\nH 0 0 0\n",
                 "t.xyz:1: frame 1: expected the number of atoms, found \"3 atoms\"");
    EXPECT_ERROR("0\n\n", "t.xyz:1: frame 1: the number of atoms must be positive, found \"0\"");
    EXPECT_ERROR("1\n\nH 0 0 0\nH 0 0 0\n",
                 "t.xyz:4: frame 2: expected the number of atoms, found \"H 0 0 0\"");

    /* truncated frames */
    EXPECT_ERROR("3\ncomment\nH 0 0 0\nH 1 0 0\n",
                 "t.xyz:1: frame 1: truncated: 3 atoms declared but the file ends after 2 atom "
                 "lines");
    EXPECT_ERROR("1\n\nH 0 0 0\n\n2\nsecond\nH 0 0 0\n\n\n",
                 "t.xyz:5: frame 2: truncated: 2 atoms declared but the file ends after 1 atom "
                 "line");
    EXPECT_ERROR("5\n", "t.xyz:1: frame 1: truncated: 5 atoms declared but the file ends after "
                        "the atom count");
    EXPECT_ERROR("99999999999999999999999\n\nH 0 0 0\n",
                 "t.xyz:1: frame 1: truncated: too many atoms declared but the file ends after "
                 "1 atom line");

    /* atom lines */
    EXPECT_ERROR("2\n\nH 0 0 0\nH 1 0\n",
                 "t.xyz:4: frame 1, atom 2: expected 4 columns, found 3");
    EXPECT_ERROR("3\n\nH 0 0 0\n\nH 1 0 0\n",
                 "t.xyz:4: frame 1, atom 2: expected 4 columns, found 0");
    EXPECT_ERROR("1\nProperties=species:S:1:pos:R:3:forces:R:3\nH 0 0 0\n",
                 "t.xyz:3: frame 1, atom 1: expected 7 columns, found 4");
    EXPECT_ERROR("2\n\nH 0 0 0\nH 0 abc 0\n",
                 "t.xyz:4: frame 1, atom 2: coordinate \"abc\" is not a number");
    EXPECT_ERROR("1\n\nH 1.0.0 0 0\n", "t.xyz:3: frame 1, atom 1: coordinate \"1.0.0\" is not a "
                                       "number");
    EXPECT_ERROR("1\n\nH 0 0 1e\n", "t.xyz:3: frame 1, atom 1: coordinate \"1e\" is not a number");
    EXPECT_ERROR("1\n\nH 0 0 1,5\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"1,5\" is not a number");
    EXPECT_ERROR("1\n\nH nan 0 0\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"nan\" is not a finite number");
    EXPECT_ERROR("1\n\nH 0 NaN 0\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"NaN\" is not a finite number");
    EXPECT_ERROR("1\n\nH 0 0 inf\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"inf\" is not a finite number");
    EXPECT_ERROR("1\n\nH 0 0 -Infinity\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"-Infinity\" is not a finite number");
    EXPECT_ERROR("1\n\nH 1e999 0 0\n",
                 "t.xyz:3: frame 1, atom 1: coordinate \"1e999\" is not a finite number");
    EXPECT_ERROR("2\n\nH 0 0 0\nXx 1 0 0\n", "t.xyz:4: frame 1, atom 2: unknown element \"Xx\"");
    EXPECT_ERROR("1\n\nX 0 0 0\n", "t.xyz:3: frame 1, atom 1: unknown element \"X\"");
    EXPECT_ERROR("1\n\nC1 0 0 0\n", "t.xyz:3: frame 1, atom 1: unknown element \"C1\"");
    EXPECT_ERROR("1\n\n0 0 0 0\n", "t.xyz:3: frame 1, atom 1: unknown element \"0\"");
    EXPECT_ERROR("1\n\n119 0 0 0\n", "t.xyz:3: frame 1, atom 1: unknown element \"119\"");
    /* the element is checked before the coordinates */
    EXPECT_ERROR("1\n\nXx nan 0 0\n", "t.xyz:3: frame 1, atom 1: unknown element \"Xx\"");
    /* in the second frame, line numbers count from the file's start */
    EXPECT_ERROR("1\nfirst\nH 0 0 0\n2\nsecond\nO 0 0 0\nH 0 0 nan\n",
                 "t.xyz:7: frame 2, atom 2: coordinate \"nan\" is not a finite number");

    /* Lattice */
    EXPECT_ERROR("1\nLattice=\"1 0 0 0 1 0 0 0\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice \"1 0 0 0 1 0 0 0\": expected 9 numbers, "
                 "found 8");
    EXPECT_ERROR("1\nLattice=\"1 0 0 0 1 0 0 0 1 0\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice \"1 0 0 0 1 0 0 0 1 0\": expected 9 "
                 "numbers, found 10");
    EXPECT_ERROR("1\nLattice=\"1 0 0 0 a 0 0 0 1\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice \"1 0 0 0 a 0 0 0 1\": \"a\" is not a "
                 "finite number");
    EXPECT_ERROR("1\nLattice=\"1 0 0 0 nan 0 0 0 1\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice \"1 0 0 0 nan 0 0 0 1\": \"nan\" is not a "
                 "finite number");
    EXPECT_ERROR("1\nLattice pbc=\"T T T\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice: expected Lattice=\"a1 a2 a3 b1 b2 b3 c1 "
                 "c2 c3\"");

    /* pbc */
    EXPECT_ERROR("1\npbc=\"T F\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed pbc \"T F\": expected three flags T or F, as "
                 "pbc=\"T T F\"");
    EXPECT_ERROR("1\npbc=\"T F X\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed pbc \"T F X\": expected three flags T or F, as "
                 "pbc=\"T T F\"");
    EXPECT_ERROR("1\npbc=\"T T T T\"\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed pbc \"T T T T\": expected three flags T or F, as "
                 "pbc=\"T T F\"");
    EXPECT_ERROR("1\npbc=yes\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed pbc \"yes\": expected three flags T or F, as "
                 "pbc=\"T T F\"");

    /* Properties */
    EXPECT_ERROR("1\nProperties=species:S:1:pos:R\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:pos:R\": expected "
                 "NAME:TYPE:COUNT triples");
    EXPECT_ERROR("1\nProperties=species:S:1:pos:X:3\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:pos:X:3\": column type "
                 "\"X\" is not S, R, I or L");
    EXPECT_ERROR("1\nProperties=species:S:1:pos:R:0\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:pos:R:0\": column count "
                 "\"0\" is not a positive integer");
    EXPECT_ERROR("1\nProperties=species:S:1:pos:R:three\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:pos:R:three\": column "
                 "count \"three\" is not a positive integer");
    EXPECT_ERROR("1\nProperties=pos:R:3\n0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"pos:R:3\": no species column");
    EXPECT_ERROR("1\nProperties=species:S:1:xyz:R:3\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:xyz:R:3\": no pos column");
    EXPECT_ERROR("1\nProperties=species:S:1:pos:R:2\nH 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1:pos:R:2\": the pos column "
                 "must be R:3");
    EXPECT_ERROR("1\nProperties=species:S:2:pos:R:3\nH H 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:2:pos:R:3\": the species "
                 "column must have count 1");
    EXPECT_ERROR("1\nProperties=species:S:1::R:3:pos:R:3\nH 0 0 0 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"species:S:1::R:3:pos:R:3\": empty "
                 "column name");
    EXPECT_ERROR("1\nProperties\nH 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Properties \"\": empty column name");

    /* a long offending text is shortened in the message */
    EXPECT_ERROR("1\nLattice=\"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\"\n"
                 "H 0 0 0\n",
                 "t.xyz:2: frame 1: malformed Lattice \"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
                 "17 18 19 ...\": expected 9 numbers, found 23");
}


/* ------------------------------------------------------------------------ */
/* The writer's quoting: what it writes reads back as the same pairs         */

/* Write the frame, read it back: every kept pair equal, in order. */
static void check_pairs_read_back(const xyz_frame *f, int line)
{
    xyz_buffer out = {0};
    const double energy = -30.5;
    CHECK(xyz_write_frame(&out, f, &energy, NULL, NULL) == 0);
    xyz_file g;
    char err[XYZ_ERROR_SIZE];
    if (xyz_read_memory("w", out.data, out.size, &g, err, sizeof err) != XYZ_OK) {
        fprintf(stderr, "%s:%d: the output does not read back: %s\n%s", __FILE__, line, err, out.data);
        failures++;
        xyz_buffer_free(&out);
        return;
    }
    const xyz_frame *h = &g.frames[0];
    size_t k = 0;
    int same = 1;
    for (size_t j = 0; same && j < f->n_info; j++) {
        if (xyz_key_is_result(f->info[j].key))
            continue;
        same = k < h->n_info && strcmp(f->info[j].key, h->info[k].key) == 0 &&
               ((!f->info[j].value && !h->info[k].value) ||
                (f->info[j].value && h->info[k].value && strcmp(f->info[j].value, h->info[k].value) == 0));
        k++;
    }
    /* Then the energy, read back as a pair of its own. */
    same = same && k + 1 == h->n_info && strcmp(h->info[k].key, "energy") == 0 &&
           strcmp(h->info[k].value, "-30.5") == 0;
    if (!same) {
        fprintf(stderr, "%s:%d: the pairs do not read back:\n%s", __FILE__, line, out.data);
        failures++;
    }
    xyz_file_free(&g);
    xyz_buffer_free(&out);
}
#define CHECK_PAIRS_READ_BACK(f) check_pairs_read_back((f), __LINE__)

static void test_writer_quoting(void)
{
    /* Read from comment lines whose verbatim text would not read back. */
    static const char *const lines[] = {
        "note=",                      /* empty value at the end of the line */
        "path=C:\\",                  /* a value ending in a backslash */
        "a=1 =b",                     /* a pair without a key after one with a value */
        "g =b",                       /* (that is g="b") */
        "flag \"\"=x",                /* a key alone, then an empty quoted key */
        "x=\"unclosed value",         /* a quote never closed */
        "q='it''s' e=[1,2 3]",        /* quotes and brackets */
        "s=\"a b\\\\\" t=\"x=y\" u==v", /* escaped backslash at the end, '=' inside values */
        "w='x\\'y' \"k e y\"=\"v a l\"",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[512];
        snprintf(text, sizeof text, "1\n%s\nH 0 0 0\n", lines[i]);
        xyz_file f;
        if (!PARSE_OK(text, &f))
            continue;
        CHECK_PAIRS_READ_BACK(&f.frames[0]);
        CHECK_ROUND_TRIP(&f);
        xyz_file_free(&f);
    }

    /* Hand-made pairs, text NULL: the writer quotes them itself. */
    static const char *const keys[] = {"note", "path", "", "q", "sp ace", "eq=k", "k", "back\\", "brace{"};
    static const char *const values[] = {"", "C:\\", "x", "say \"hi\"", "a b", "=x=", NULL, "\\\\", "}"};
    xyz_info info[9];
    xyz_frame f;
    memset(&f, 0, sizeof f);
    int32_t z = 1;
    double r[3] = {0, 0, 0};
    f.n_atoms = 1;
    f.numbers = &z;
    f.positions = r;
    f.n_columns = 4;
    for (size_t i = 0; i < 9; i++)
        info[i] = (xyz_info){(char *)keys[i], (char *)values[i], NULL};
    f.info = info;
    f.n_info = 9;
    CHECK_PAIRS_READ_BACK(&f);
    /* A wrong text is not trusted either. */
    info[0].text = "note=";
    CHECK_PAIRS_READ_BACK(&f);

    /* The texts the writer makes. */
    char *t = xyz_pair_text("note", "");
    CHECK_STR(t, "note=\"\"");
    free(t);
    t = xyz_pair_text("path", "C:\\");
    CHECK_STR(t, "path=\"C:\\\\\"");
    free(t);
    t = xyz_pair_text("", "b");
    CHECK_STR(t, "\"\"=b");
    free(t);
    t = xyz_pair_text("plain", "value");
    CHECK_STR(t, "plain=value");
    free(t);
    CHECK(!xyz_pair_text_reads_back("=b", "", "b"));
    CHECK(!xyz_pair_text_reads_back("path=C:\\", "path", "C:\\"));
    CHECK(!xyz_pair_text_reads_back("note=", "note", ""));
    CHECK(xyz_pair_text_reads_back("b='c d'", "b", "c d"));

    /* --on-error skip's tag: written after the kept pairs; the frame's own dropped. */
    xyz_file g;
    if (PARSE_OK("1\ninput_frame=7 name=x\nH 0 0 0\n", &g)) {
        xyz_buffer out = {0};
        const double energy = 1.5;
        xyz_results results = {&energy, NULL, NULL, 12};
        CHECK(xyz_write_frame_with(&out, &g.frames[0], &results) == 0);
        CHECK(out.data && strstr(out.data, "name=x input_frame=12 energy=1.5 ") &&
              !strstr(out.data, "input_frame=7"));
        xyz_buffer_free(&out);
        xyz_file_free(&g);
    }
}

/* The writer's numbers are printf's, digit for digit. */
static void test_number_formatting(void)
{
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int bad = 0;
    for (int i = 0; i < 400000 && bad < 5; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        double x;
        switch (i % 4) {
        case 0: /* any bits */
            memcpy(&x, &state, sizeof x);
            if (!isfinite(x))
                continue;
            break;
        case 1: /* the magnitudes of coordinates and forces */
            x = ldexp((double)(state >> 11), -53) * pow(10.0, (double)(int)((state >> 3) % 24) - 12);
            break;
        case 2: /* short binary fractions: exact ties of the rounding */
            x = ldexp((double)(state % 100000000000ull), -(int)((state >> 40) % 45));
            break;
        default: /* round decimal numbers as inputs have them */
            x = (double)(int64_t)(state % 2000000001ull - 1000000000) / 1e6;
            break;
        }
        if ((state >> 63) & 1)
            x = -x;
        static const int forms[2][2] = {{16, 24}, {10, 18}};
        for (int k = 0; k < 2; k++) {
            char want[64], got[64];
            snprintf(want, sizeof want, "%*.*e", forms[k][1], forms[k][0], x);
            int n = xyz_format_e(x, forms[k][0], forms[k][1], got);
            if (strcmp(want, got) != 0 || n != (int)strlen(want)) {
                fprintf(stderr, "%s:%d: %a as %%%d.%de: [%s], printf [%s]\n", __FILE__, __LINE__, x,
                        forms[k][1], forms[k][0], got, want);
                failures++;
                bad++;
            }
        }
    }
    static const double edges[] = {0.0, -0.0, 1.0, 9.99999999999999999e-1, 9.9999999999e-1, 0.99999999999,
                                   1e-6, 1e-7, 9.999999999999999e15, 1e16, 1e17, 1e22, 1e23, 5e-324,
                                   2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.5, 0.25,
                                   123456789.123456789, 4503599627370496.5, 9007199254740992.0};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        for (int sign = 0; sign < 2; sign++) {
            double x = sign ? -edges[i] : edges[i];
            char want[64], got[64];
            for (int p = 10; p <= 16; p += 6) {
                snprintf(want, sizeof want, "%*.*e", p + 8, p, x);
                xyz_format_e(x, p, p + 8, got);
                CHECK_STR(got, want);
            }
        }
}

/* Coordinates read exactly as strtod reads them, whatever their spelling. */
static void test_number_parsing(void)
{
    static const char *const fixed[] = {
        "0", "-0", "+0.0", "-0.000", "1.", ".5", "-.5", "007", "1e5", "1E-5", "1e+22", "1e23", "1e-22",
        "1e-23", "123456789012345", "1234567890123456", "0.1", "0.30000000000000004", "9007199254740993",
        "4.9406564584124654e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "0x1p-3",
        "123456789012345e-22", "123456789012345e-23", "0.000000000000000000000000001", "5e-324",
        "100000000000000000000000", "-4.53992558", "3.14159265358979", "1e0", "1e-0", "12345.6789e-3"};
    uint64_t state = 88172645463325252ull;
    char text[1 << 17], tokens[3200][48];
    size_t n_tokens = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        snprintf(tokens[n_tokens++], 48, "%s", fixed[i]);
    while (n_tokens < 3000) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        int digits = 1 + (int)(state % 17), point = (int)((state >> 8) % (unsigned)(digits + 1));
        int exponent = (int)((state >> 16) % 61) - 30, style = (int)((state >> 24) % 4);
        char *t = tokens[n_tokens++];
        size_t k = 0;
        if ((state >> 30) & 1)
            t[k++] = '-';
        for (int d = 0; d < digits; d++) {
            if (d == point && style != 0)
                t[k++] = '.';
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            t[k++] = (char)('0' + state % 10);
        }
        if (style >= 2)
            k += (size_t)snprintf(t + k, 48 - k, "e%d", exponent);
        t[k] = '\0';
    }
    size_t at = (size_t)snprintf(text, sizeof text, "%zu\n\n", n_tokens / 3);
    for (size_t i = 0; i + 2 < n_tokens; i += 3)
        at += (size_t)snprintf(text + at, sizeof text - at, "H %s %s %s\n", tokens[i], tokens[i + 1],
                               tokens[i + 2]);
    xyz_file f;
    if (!PARSE_OK(text, &f))
        return;
    for (size_t i = 0; i < n_tokens / 3 * 3; i++) {
        double want = strtod(tokens[i], NULL);
        if (memcmp(&want, &f.frames[0].positions[i], sizeof want) != 0) {
            fprintf(stderr, "%s:%d: %s read as %.17g, strtod says %.17g\n", __FILE__, __LINE__, tokens[i],
                    f.frames[0].positions[i], want);
            failures++;
        }
    }
    xyz_file_free(&f);
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */

/* A source that hands out a few bytes at a time, to cross every boundary. */
typedef struct trickle {
    const char *data;
    size_t size, at, step;
} trickle;

static long trickle_read(void *self, char *buffer, size_t size, char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    trickle *t = self;
    size_t n = t->size - t->at;
    if (n > t->step)
        n = t->step;
    if (n > size)
        n = size;
    memcpy(buffer, t->data + t->at, n);
    t->at += n;
    return (long)n;
}

/* Every frame of text through a stream (step bytes a read; 0: from memory)
 * against xyz_read_memory's. */
static void check_stream_equals_file(const char *text, size_t step, int line)
{
    xyz_file whole;
    char err[XYZ_ERROR_SIZE];
    if (xyz_read_memory("t.xyz", text, strlen(text), &whole, err, sizeof err) != XYZ_OK) {
        fprintf(stderr, "%s:%d: %s\n", __FILE__, line, err);
        failures++;
        return;
    }
    trickle t = {text, strlen(text), 0, step};
    xyz_source source = {trickle_read, &t};
    xyz_stream *s = step ? xyz_stream_open("t.xyz", source, 0) : xyz_stream_open_memory("t.xyz", text, strlen(text), 0);
    size_t n = 0;
    xyz_frame f;
    int status;
    while ((status = xyz_stream_next(s, &f, err, sizeof err)) == XYZ_OK) {
        const xyz_frame *w = n < whole.n_frames ? &whole.frames[n] : NULL;
        if (!w || w->n_atoms != f.n_atoms || w->count_line != f.count_line ||
            memcmp(w->positions, f.positions, 3 * (size_t)f.n_atoms * sizeof(double)) != 0 ||
            memcmp(w->numbers, f.numbers, (size_t)f.n_atoms * sizeof(int32_t)) != 0 ||
            w->n_info != f.n_info) {
            fprintf(stderr, "%s:%d: streamed frame %zu differs (step %zu)\n", __FILE__, line, n + 1, step);
            failures++;
        }
        CHECK(xyz_stream_frame_number(s) == n + 1);
        xyz_frame_free(&f);
        n++;
    }
    if (status != XYZ_END || n != whole.n_frames) {
        fprintf(stderr, "%s:%d: stream gave %zu frames and %d (%s), want %zu\n", __FILE__, line, n, status,
                err, whole.n_frames);
        failures++;
    }
    CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_END);
    CHECK(xyz_stream_bytes_read(s) == (int64_t)strlen(text));
    xyz_stream_close(s);
    xyz_file_free(&whole);
}

/* The errors a stream reports, in recover mode, and the frames it reads. */
typedef struct outcome {
    int status;           /* XYZ_OK or XYZ_ERROR_FORMAT */
    size_t frame;         /* its number */
    const char *text;     /* the error, or the frame's name= */
} outcome;

static void check_recovery(const char *text, const outcome *want, size_t n_want, size_t step, int line)
{
    char err[XYZ_ERROR_SIZE];
    trickle t = {text, strlen(text), 0, step};
    xyz_source source = {trickle_read, &t};
    xyz_stream *s = xyz_stream_open("t.xyz", source, 1);
    size_t k = 0;
    for (;; k++) {
        xyz_frame f;
        int status = xyz_stream_next(s, &f, err, sizeof err);
        if (status == XYZ_END)
            break;
        const char *got = status == XYZ_OK ? (f.n_info && f.info[0].value ? f.info[0].value : "?") : err;
        if (k >= n_want || status != want[k].status || xyz_stream_frame_number(s) != want[k].frame ||
            strcmp(got, want[k].text) != 0) {
            fprintf(stderr, "%s:%d: outcome %zu (step %zu): got %d frame %zu [%s]\n", __FILE__, line, k + 1,
                    step, status, xyz_stream_frame_number(s), got);
            failures++;
        }
        xyz_frame_free(&f);
        if (status != XYZ_OK && xyz_stream_failed(s))
            break;
    }
    if (k != n_want) {
        fprintf(stderr, "%s:%d: %zu outcomes, want %zu (step %zu)\n", __FILE__, line, k, n_want, step);
        failures++;
    }
    xyz_stream_close(s);
}

static void test_streams(void)
{
    const char *text = "2\nname=a\nO 0 0 0\nH 0 0 0.96\n\n\n"
                       "3\r\nLattice=\"10 0 0 0 10 0 0 0 10\" name=b\r\nC 1 2 3\r\nN 4 5 6\r\nS 7 8 9\r\n"
                       "1\nname=c\nH 0.1 0.2 0.3";
    for (size_t step = 0; step < 9; step++)
        check_stream_equals_file(text, step, __LINE__);
    check_stream_equals_file(text, 100000, __LINE__);

    /* Offsets: where frames start and end; a last line without its line feed. */
    xyz_stream *s = xyz_stream_open_memory("t.xyz", text, strlen(text), 0);
    xyz_frame f;
    char err[XYZ_ERROR_SIZE];
    CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_OK);
    CHECK(xyz_stream_frame_offset(s) == 0 && xyz_stream_end_offset(s) == 28 && xyz_stream_line_ended(s));
    xyz_frame_free(&f);
    CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_OK);
    CHECK(xyz_stream_frame_offset(s) == 30);
    xyz_frame_free(&f);
    CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_OK);
    CHECK(!xyz_stream_line_ended(s) && xyz_stream_end_offset(s) == (int64_t)strlen(text));
    xyz_frame_free(&f);
    xyz_stream_close(s);

    /* Bad frames of every kind, each passed over, the good ones after them read. */
    const char *bad = "1\nname=one\nH 0 0 0\n"
                      "2\nname=bad-coordinate\nH 0 0 0\nH 0 x 0\n"   /* frame 2 */
                      "1\nname=three\nH 0 0 0\n"
                      "3\nname=too-many\nH 0 0 0\nH 0 0 1\n"         /* frame 4: its count is too large */
                      "1\nname=five\nH 0 0 0\n"
                      "garbage here\n"                                 /* frame 6 */
                      "1\nname=seven\nH 0 0 0\n"
                      "1\nLattice=\"1 2\" name=eight\nH 0 0 0\n"       /* frame 8 */
                      "1\nname=nine\nXx 0 0 0\n"                       /* frame 9 */
                      "2\nname=ten\nH 0 0 0\nH 0 0 1\n"
                      "1\nname=eleven\nH 0 0 0\nH 0 0 1\nO 1 1 1\n"    /* two atom lines too many: frame 12 */
                      "1\nname=thirteen\nH 0 0 0\n"
                      "2\nname=cut\nH 0 0 0\n";                        /* frame 14, the file ends */
    static const outcome want[] = {
        {XYZ_OK, 1, "one"},
        {XYZ_ERROR_FORMAT, 2, "t.xyz:7: frame 2, atom 2: coordinate \"x\" is not a number"},
        {XYZ_OK, 3, "three"},
        {XYZ_ERROR_FORMAT, 4, "t.xyz:15: frame 4, atom 3: expected 4 columns, found 1"},
        {XYZ_OK, 5, "five"},
        {XYZ_ERROR_FORMAT, 6, "t.xyz:18: frame 6: expected the number of atoms, found \"garbage here\""},
        {XYZ_OK, 7, "seven"},
        {XYZ_ERROR_FORMAT, 8, "t.xyz:23: frame 8: malformed Lattice \"1 2\": expected 9 numbers, found 2"},
        {XYZ_ERROR_FORMAT, 9, "t.xyz:27: frame 9, atom 1: unknown element \"Xx\""},
        {XYZ_OK, 10, "ten"},
        {XYZ_OK, 11, "eleven"},
        {XYZ_ERROR_FORMAT, 12, "t.xyz:35: frame 12: expected the number of atoms, found \"H 0 0 1\""},
        {XYZ_OK, 13, "thirteen"},
        {XYZ_ERROR_FORMAT, 14, "t.xyz:40: frame 14: truncated: 2 atoms declared but the file ends after 1 atom line"},
    };
    for (size_t step = 1; step < 12; step += 5)
        check_recovery(bad, want, sizeof want / sizeof *want, step, __LINE__);

    /* Failures of the file itself end a stream for good. */
    static const outcome nul[] = {
        {XYZ_OK, 1, "one"},
        {XYZ_ERROR_FORMAT, 1, "t.xyz: not a text file (a NUL byte on line 5)"},
    };
    const char with_nul[] = "1\nname=one\nH 0 0 0\n1\n\0\nH 0 0 0\n";
    {
        trickle t = {with_nul, sizeof with_nul - 1, 0, 20};
        xyz_source source = {trickle_read, &t};
        s = xyz_stream_open("t.xyz", source, 1);
        CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_OK);
        xyz_frame_free(&f);
        CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_ERROR_FORMAT);
        CHECK_STR(err, nul[1].text);
        CHECK(xyz_stream_failed(s));
        CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_ERROR_FORMAT);
        CHECK_STR(err, nul[1].text);
        xyz_stream_close(s);
    }
    /* No line feed for longer than a line may be: an error, not all of memory. */
    {
        size_t n = XYZ_MAX_LINE + 10;
        char *long_line = malloc(n);
        memset(long_line, ' ', n);
        long_line[0] = '1';
        s = xyz_stream_open_memory("t.xyz", long_line, n, 1);
        CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_ERROR_FORMAT);
        CHECK_STR(err, "t.xyz: line 1 is longer than 16 MiB");
        CHECK(xyz_stream_failed(s));
        xyz_stream_close(s);
        free(long_line);
    }
    /* Empty streams. */
    s = xyz_stream_open_memory("t.xyz", "", 0, 1);
    CHECK(xyz_stream_next(s, &f, err, sizeof err) == XYZ_ERROR_FORMAT);
    CHECK_STR(err, "t.xyz: file is empty");
    xyz_stream_close(s);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        data_dir = argv[1];
    test_elements();
    test_reference_files();
    test_multi_frame();
    test_plain_xyz();
    test_comment_line();
    test_cell_and_pbc();
    test_columns();
    test_exact_positions();
    test_errors();
    test_writer_quoting();
    test_number_parsing();
    test_number_formatting();
    test_streams();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all xyz tests passed\n");
    return 0;
}
