package gzstream.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's half: which files a {@code load} path names, and the splits of each, through
 * {@code gzstream index --plan SIZE --json}. Runs while Spark plans the query, so a stale or
 * foreign index fails the query before any task starts. Stateless; safe from any thread.
 */
final class SplitPlanner {
    private SplitPlanner() {}

    private static final Logger LOG = LoggerFactory.getLogger(SplitPlanner.class);
    private static final String INDEX_SUFFIX = ".gzidx";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The files that {@code paths} name, absolute, without duplicates, in name order.
     *
     * @param paths each a file, a glob (Hadoop's glob syntax: {@code *}, {@code ?},
     *     {@code [ab]}, {@code {a,b}}) or a directory (its {@code *.gz} files), with or without a
     *     {@code file:} scheme
     * @return regular files; index files ({@code *.gzidx}) a glob happens to match are left out
     * @throws IllegalArgumentException for a scheme other than {@code file:} (gzstream reads
     *     local or mounted paths only), or when nothing matches
     */
    static List<String> expandPaths(List<String> paths) {
        TreeSet<String> files = new TreeSet<>();
        try {
            FileSystem local = FileSystem.getLocal(new Configuration());
            for (String given : paths) {
                Path path = new Path(given);
                String scheme = path.toUri().getScheme();
                if (scheme != null && !scheme.equals("file")) {
                    throw new IllegalArgumentException(
                        GzipLinesSource.NAME + " reads local or shared (mounted) paths only, not '" + given + "'");
                }
                Path pattern = local.makeQualified(path);
                try {
                    if (local.getFileStatus(pattern).isDirectory()) {
                        pattern = new Path(pattern, "*.gz");
                    }
                } catch (FileNotFoundException notOneFile) {
                    // A glob, or nothing: globStatus says which.
                }
                FileStatus[] matches = local.globStatus(pattern);
                int before = files.size();
                for (FileStatus status : matches == null ? new FileStatus[0] : matches) {
                    String name = status.getPath().toUri().getPath();
                    if (status.isFile() && !name.endsWith(INDEX_SUFFIX)) {
                        files.add(name);
                    }
                }
                if (files.size() == before) {
                    throw new IllegalArgumentException(GzipLinesSource.NAME + ": no file matches '" + given + "'");
                }
            }
        } catch (IOException error) {
            throw new UncheckedIOException(GzipLinesSource.NAME + ": could not list " + paths + ": " + error.getMessage(), error);
        }
        return new ArrayList<>(files);
    }

    /**
     * Splits one file through {@code gzstream index --plan SIZE --json}; nothing is written to
     * disk. A file without a usable index has one split (offset 0 to the end), and gzstream's
     * warning is logged at WARN.
     *
     * @param binary the gzstream executable
     * @param file the .gz file, an absolute path
     * @param splitSize plain bytes per split, about (splits start at the index's access points)
     * @return the splits in file order; together they cover the file's plain bytes
     * @throws GzstreamException with gzstream's message when the index is stale, foreign or
     *     unsafe, the file unreadable, or the output is not the JSON object of the contract
     */
    static List<GzipSplit> planFile(String binary, String file, long splitSize) {
        String output = Gzstream.runForText(Gzstream.planArguments(binary, file, splitSize));
        List<GzipSplit> splits = new ArrayList<>();
        try {
            JsonNode plan = JSON.readTree(output);
            JsonNode index = plan.get("index");
            String indexPath = index == null || index.isNull() ? null : index.asText();
            JsonNode listed = plan.get("splits");
            if (listed == null || !listed.isArray() || listed.isEmpty()) {
                throw new IOException("no splits");
            }
            for (JsonNode split : listed) {
                JsonNode offset = split.get("offset");
                JsonNode length = split.get("length");
                if (offset == null || !offset.canConvertToLong() || length == null
                    || !(length.isNull() || length.canConvertToLong())) {
                    throw new IOException("a split without a whole-number offset and length: " + split);
                }
                splits.add(new GzipSplit(file, offset.asLong(), length.isNull() ? -1 : length.asLong(), indexPath));
            }
            JsonNode warning = plan.get("warning");
            if (warning != null && !warning.isNull()) {
                LOG.warn("{}: {}: {}", GzipLinesSource.NAME, file, warning.asText());
            }
        } catch (IOException error) {
            throw new GzstreamException(file + ": gzstream index --plan printed no plan Spark can use ("
                + error.getMessage() + ")", error);
        }
        return splits;
    }
}
