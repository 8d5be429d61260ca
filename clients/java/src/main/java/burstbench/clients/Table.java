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

    /** {@code value} for {@code row}'s option if it passes the row's checks, else exit 2. */
    public static String checked(Map<String, String> row, String value) {
        String name = "--" + row.get("option"), type = row.get("type");
        String pattern = row.get("pattern"), choices = row.get("choices");
        String min = row.get("min"), max = row.get("max"), above = row.get("above");
        if (type.equals("int") || type.equals("number")) {
            double x = Double.NaN;
            try {
                x = type.equals("int") ? Long.parseLong(value) : Double.parseDouble(value);
            } catch (NumberFormatException e) {
                usage(name + " needs " + (type.equals("int") ? "an integer" : "a number") + ": '" + value + "'");
            }
            if (Double.isNaN(x) || Double.isInfinite(x)
                    || (!min.isEmpty() && x < Double.parseDouble(min))
                    || (!max.isEmpty() && x > Double.parseDouble(max))
                    || (!above.isEmpty() && x <= Double.parseDouble(above)))
                usage(name + " must be " + (above.isEmpty() ? min + ".." + max : "> " + above + " and <= " + max)
                      + ": '" + value + "'");
            return value;
        }
        String[] items = type.equals("queues") || type.equals("urls") ? value.split(",", -1) : new String[] {value};
        Pattern whole = pattern.isEmpty() ? null : Pattern.compile(pattern);
        boolean allMatch = true;
        for (String item : items) allMatch &= whole == null || whole.matcher(item).matches();
        if (type.equals("url") || type.equals("urls")) {
            if (!allMatch) usage(name + " must be an address in " + choices.replace(",", ", ") + ": '" + value + "'");
        } else if (!choices.isEmpty() && type.equals("string")) {
            if (!List.of(choices.split(",")).contains(value))
                usage(name + " must be one of " + choices.replace(",", ", ") + ": '" + value + "'");
        } else if (!allMatch) {
            usage(name + " must match " + pattern + ": '" + value + "'");
        }
        return value;
    }
}
