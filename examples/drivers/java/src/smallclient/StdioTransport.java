package smallclient;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import mcpdriver.Json;

/** stdio: spawn the server, one JSON-RPC message per line on its stdin and stdout. */
public final class StdioTransport implements Transport {
    private final List<String> command;
    private final Map<String, String> env;
    private Process process;
    private OutputStream stdin;

    public StdioTransport(List<String> command, Map<String, String> env) {
        this.command = command;
        this.env = env;
    }

    @Override
    public void start(final Receiver receiver) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        builder.redirectError(ProcessBuilder.Redirect.INHERIT); // server logs: our stderr
        process = builder.start();
        stdin = process.getOutputStream();
        final BufferedReader out = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Thread reader = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    String line;
                    while ((line = out.readLine()) != null) {
                        if (line.trim().isEmpty()) {
                            continue;
                        }
                        Object message;
                        try {
                            message = Json.parse(line);
                        } catch (Json.JsonException e) {
                            System.err.println("small-client: bad line from server: " + e.getMessage());
                            continue;
                        }
                        if (message instanceof Map) {
                            receiver.message(Json.object(message));
                        } else {
                            System.err.println("small-client: ignored a non-object message: " + line);
                        }
                    }
                    receiver.closed("the server closed its stdout");
                } catch (IOException e) {
                    receiver.closed("reading from the server failed: " + e);
                }
            }
        }, "stdio-reader");
        reader.setDaemon(true);
        reader.start();
    }

    @Override
    public synchronized void send(Map<String, Object> message) throws IOException {
        stdin.write((Json.write(message) + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    @Override
    public void initialized(String protocolVersion) {
    }

    @Override
    public void close() {
        if (process == null) {
            return;
        }
        try {
            stdin.close(); // the spec's shutdown: close stdin, wait, then terminate
            if (!process.waitFor(2, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(2, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(2, TimeUnit.SECONDS);
                }
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
