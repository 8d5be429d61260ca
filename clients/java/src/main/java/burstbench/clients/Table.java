package burstbench.clients;

import static burstbench.clients.Common.usage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * clients/options.tsv: clients/options.yaml resolved for each client and role (defaults, bounds,
 * patterns, the URL schemes of its protocol), one row an option, as the harness writes it
 * ({@code python -m burstbench.options}). Found from where this code was loaded: the first
 * folder above it that holds {@code options.tsv} or {@code clients/options.tsv}.
 */
public final class Table {
    private Table() {}

    /** The rows of {@code client}'s {@code role}, in the table's order: column name to value. */
    public static List<Map<String, String>> rows(String client, String role) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read clients/options.tsv: " + e.getMessage(), e);
        }
        String[] head = null;
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("#") || line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            if (head == null) { head = f; continue; }
            if (!f[0].equals(client) || !f[1].equals(role)) continue;
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < head.length; i++) row.put(head[i], f[i]);
            rows.add(row);
        }
        return rows;
    }

    private static Path file() {
        try {
            Path at = Path.of(Table.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path d = at; d != null; d = d.getParent()) {
                for (Path f : new Path[] {d.resolve("options.tsv"), d.resolve("clients/options.tsv")}) {
                    if (Files.isRegularFile(f)) return f;
                }
            }
        } catch (java.net.URISyntaxException | SecurityException e) {
            // fall through
        }
        throw new IllegalStateException("clients/options.tsv not found above this program's classes");
    }

    /**
     * The values of a parsed command line, by option name, each checked against its row: a
     * flag given is "1"; an option not given takes its row's default (none: absent). {@code
     * given} is the value given on the command line (null: not given), {@code flag} whether a
     * flag was given. Throws IllegalArgumentException (one line) at the first that will not do.
     */
    public static Map<String, String> values(List<Map<String, String>> rows, java.util.function.UnaryOperator<String> given,
                                             java.util.function.Predicate<String> flag) {
        Map<String, String> v = new java.util.HashMap<>();
        for (Map<String, String> row : rows) {
            String name = row.get("option");
            if (row.get("type").equals("flag")) {
                if (flag.test(name)) v.put(name, "1");
                continue;
            }
            String value = given.apply(name);
            if (value == null && !row.get("default").isEmpty()) value = row.get("default");
            if (value == null && row.get("required").equals("1")) throw new IllegalArgumentException("missing required option --" + name);
            String why = value == null ? null : bad(row, value);
            if (why != null) throw new IllegalArgumentException(why);
            if (value != null) v.put(name, value);
        }
        return v;
    }

    /** {@code value} for {@code row}'s option if it passes the row's checks, else exit 2. */
    public static String checked(Map<String, String> row, String value) {
        String why = bad(row, value);
        if (why != null) usage(why);
        return value;
    }

    /** Why {@code value} does not pass {@code row}'s checks (one line naming the option), or null. */
    public static String bad(Map<String, String> row, String value) {
        String name = "--" + row.get("option"), type = row.get("type");
        String pattern = row.get("pattern"), choices = row.get("choices");
        String min = row.get("min"), max = row.get("max"), above = row.get("above");
        if (type.equals("int") || type.equals("number")) {
            double x;
            try {
                x = type.equals("int") ? Long.parseLong(value) : Double.parseDouble(value);
            } catch (NumberFormatException e) {
                return name + " needs " + (type.equals("int") ? "an integer" : "a number") + ": '" + value + "'";
            }
            if (Double.isNaN(x) || Double.isInfinite(x)
                    || (!min.isEmpty() && x < Double.parseDouble(min))
                    || (!max.isEmpty() && x > Double.parseDouble(max))
                    || (!above.isEmpty() && x <= Double.parseDouble(above)))
                return name + " must be " + (above.isEmpty() ? min + ".." + max : "> " + above + " and <= " + max)
                    + ": '" + value + "'";
            return null;
        }
        String[] items = type.equals("queues") || type.equals("urls") ? value.split(",", -1) : new String[] {value};
        Pattern whole = pattern.isEmpty() ? null : Pattern.compile(pattern);
        boolean allMatch = true;
        for (String item : items) allMatch &= whole == null || whole.matcher(item).matches();
        if (type.equals("url") || type.equals("urls")) {
            if (!allMatch) return name + " must be an address in " + choices.replace(",", ", ") + ": '" + value + "'";
        } else if (!choices.isEmpty() && type.equals("string")) {
            if (!List.of(choices.split(",")).contains(value))
                return name + " must be one of " + choices.replace(",", ", ") + ": '" + value + "'";
        } else if (!allMatch) {
            return name + " must match " + pattern + ": '" + value + "'";
        }
        return null;
    }
}
