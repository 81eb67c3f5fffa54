package smallclient;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import mcpdriver.Driver;
import mcpdriver.DriverClient;
import mcpdriver.DriverException;
import mcpdriver.Json;

/**
 * The {@link DriverClient} for {@link SmallMcpClient}: what a user of the kit writes for their
 * own client. Run it with {@code java -cp examples/drivers/java/build smallclient.SmallClientDriver}.
 */
public final class SmallClientDriver implements DriverClient {
    private volatile SmallMcpClient client;
    private volatile List<Object> roots = new ArrayList<Object>(); // what roots/list answers
    private volatile boolean rootsDeclared;

    public static void main(String[] args) {
        Driver.run(new SmallClientDriver());
    }

    @Override
    public Map<String, Object> info() {
        return Json.obj("name", "small-java-mcp-client", "version", "0.1.0");
    }

    @Override
    public List<String> supports() {
        List<String> supports = new ArrayList<String>(Arrays.asList(
                "stdio", "http", "tools", "resources", "prompts", "sampling", "elicitation",
                "roots", "ping", "cancel", "progress", "logging",
                // driver protocol 1.1 operations this client has (no tasks, no listen)
                "set_log_level", "subscribe_resource", "complete", "list_resource_templates",
                "set_roots"));
        supports.addAll(SmallMcpClient.VERSIONS);
        return supports;
    }

    @Override
    public Map<String, Object> connect(Map<String, Object> spec, ConnectOptions options) throws Exception {
        if (client != null) {
            throw DriverException.other("connect was already sent", null);
        }
        String version = options.protocolVersion == null ? SmallMcpClient.LATEST : options.protocolVersion;
        if (!SmallMcpClient.VERSIONS.contains(version)) {
            throw DriverException.unsupported("the small client does not speak " + version);
        }
        final Handlers handlers = options.handlers;
        final Events events = options.events;
        // Capabilities only for the server requests the harness gave answers for.
        Map<String, Object> capabilities = new LinkedHashMap<String, Object>();
        if (handlers.hasSampling()) {
            capabilities.put("sampling", new LinkedHashMap<String, Object>());
        }
        if (handlers.hasElicitation()) {
            capabilities.put("elicitation", new LinkedHashMap<String, Object>());
        }
        rootsDeclared = handlers.hasRoots();
        if (rootsDeclared) {
            roots = handlers.roots();
            capabilities.put("roots", Json.obj("listChanged", true)); // setRoots notifies
        }
        SmallMcpClient.Listener listener = new SmallMcpClient.Listener() {
            @Override
            public void notification(String method, Map<String, Object> params) {
                events.notification(method, params); // progress, logs, list changes: all surfaced
            }

            @Override
            public Map<String, Object> request(String method, Map<String, Object> params) throws McpException {
                if ("sampling/createMessage".equals(method) && handlers.hasSampling()) {
                    return handlers.createMessage(params);
                }
                if ("elicitation/create".equals(method) && handlers.hasElicitation()) {
                    return handlers.elicit(params);
                }
                if ("roots/list".equals(method) && rootsDeclared) {
                    return Json.obj("roots", roots);
                }
                throw new McpException(-32601, "Method not found: " + method, null);
            }
        };
        SmallMcpClient c = new SmallMcpClient(transportOf(spec, options.timeoutMs), listener, options.timeoutMs);
        client = c;
        try {
            c.connect(Json.obj("name", "small-java-mcp-client", "version", "0.1.0"), capabilities, version);
        } catch (McpException e) {
            throw DriverException.protocol(e.code, e.getMessage());
        }
        return Json.obj("protocolVersion", c.protocolVersion(), "serverInfo", c.serverInfo());
    }

    @SuppressWarnings("unchecked")
    private static Transport transportOf(Map<String, Object> spec, long timeoutMs) throws DriverException {
        String type = Json.string(spec.get("type"));
        if ("stdio".equals(type)) {
            List<String> command = new ArrayList<String>();
            for (Object part : (List<Object>) spec.get("command")) {
                command.add((String) part);
            }
            return new StdioTransport(command, strings(Json.object(spec.get("env"))));
        }
        if ("http".equals(type)) {
            return new HttpTransport(Json.string(spec.get("url")), strings(Json.object(spec.get("headers"))),
                    (int) Math.min(Integer.MAX_VALUE, timeoutMs));
        }
        throw DriverException.unsupported("the small client has no transport " + Json.write(type));
    }

    private static Map<String, String> strings(Map<String, Object> map) {
        Map<String, String> out = new LinkedHashMap<String, String>();
        for (Map.Entry<String, Object> e : map.entrySet()) {
            out.put(e.getKey(), String.valueOf(e.getValue()));
        }
        return out;
    }

    /** One request; the client's failures mapped onto the driver protocol's error kinds. */
    private Map<String, Object> call(String method, Map<String, Object> params, Long timeoutMs) throws Exception {
        SmallMcpClient c = client;
        if (c == null) {
            throw DriverException.other(method + " before connect", null);
        }
        try {
            return c.request(method, params, timeoutMs);
        } catch (McpException e) {
            throw DriverException.protocol(e.code, e.getMessage()); // the server's JSON-RPC error
        } catch (TimeoutException e) {
            throw DriverException.timeout(e.getMessage()); // the client's own time-out
        } catch (IOException e) {
            throw DriverException.transport(e.getMessage(), e); // HTTP status, broken stream, exited server
        }
        // InterruptedException (a cancel) passes through: the driver replies "cancelled".
    }

    private static Map<String, Object> page(String cursor) {
        return cursor == null ? null : Json.obj("cursor", cursor);
    }

    @Override
    public Map<String, Object> listTools(String cursor) throws Exception {
        return call("tools/list", page(cursor), null);
    }

    @Override
    public Map<String, Object> callTool(String name, Map<String, Object> arguments, Long timeoutMs, boolean progress)
            throws Exception {
        Map<String, Object> params = Json.obj("name", name, "arguments", arguments);
        if (progress) {
            params.put("_meta", Json.obj("progressToken", "progress-" + System.nanoTime()));
        }
        return call("tools/call", params, timeoutMs);
    }

    @Override
    public Map<String, Object> listResources(String cursor) throws Exception {
        return call("resources/list", page(cursor), null);
    }

    @Override
    public Map<String, Object> readResource(String uri) throws Exception {
        return call("resources/read", Json.obj("uri", uri), null);
    }

    @Override
    public Map<String, Object> listPrompts(String cursor) throws Exception {
        return call("prompts/list", page(cursor), null);
    }

    @Override
    public Map<String, Object> getPrompt(String name, Map<String, Object> arguments) throws Exception {
        return call("prompts/get", Json.obj("name", name, "arguments", arguments), null);
    }

    @Override
    public void ping() throws Exception {
        call("ping", null, null);
    }

    @Override
    public void close() {
        SmallMcpClient c = client;
        client = null; // a later connect (after a reset) starts a new client
        if (c != null) {
            c.close();
        }
    }

    @Override
    public boolean reusable() {
        return true;
    }

    // -- driver protocol 1.1 -------------------------------------------------------------------

    @Override
    public void setLogLevel(String level) throws Exception {
        call("logging/setLevel", Json.obj("level", level), null);
    }

    @Override
    public void subscribeResource(String uri) throws Exception {
        call("resources/subscribe", Json.obj("uri", uri), null);
    }

    @Override
    public void unsubscribeResource(String uri) throws Exception {
        call("resources/unsubscribe", Json.obj("uri", uri), null);
    }

    @Override
    public Map<String, Object> complete(
            Map<String, Object> ref, Map<String, Object> argument, Map<String, Object> context)
            throws Exception {
        Map<String, Object> params = Json.obj("ref", ref, "argument", argument);
        if (context != null) {
            params.put("context", context);
        }
        return call("completion/complete", params, null);
    }

    @Override
    public Map<String, Object> listResourceTemplates(String cursor) throws Exception {
        return call("resources/templates/list", page(cursor), null);
    }

    @Override
    public void setRoots(List<Object> newRoots) throws Exception {
        roots = newRoots;
        SmallMcpClient c = client;
        if (c != null && rootsDeclared) {
            try {
                c.notify("notifications/roots/list_changed", null);
            } catch (IOException e) {
                throw DriverException.transport(e.getMessage(), e);
            }
        }
    }
}
