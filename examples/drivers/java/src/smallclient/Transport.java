package smallclient;

import java.io.IOException;
import java.util.Map;

/** Moves JSON-RPC messages between the client and one server. */
public interface Transport {
    /** Where incoming messages go. */
    interface Receiver {
        void message(Map<String, Object> message);

        /** The connection is gone: no more messages will come. */
        void closed(String why);

        /** Sending the request with this id failed: its caller should get {@code error}. */
        void failed(Object id, IOException error);
    }

    void start(Receiver receiver) throws IOException;

    /** Sends one message; a transport may send a request in the background (see failed). */
    void send(Map<String, Object> message) throws IOException;

    /** Called once initialization is done, with the negotiated revision. */
    void initialized(String protocolVersion);

    void close();
}
